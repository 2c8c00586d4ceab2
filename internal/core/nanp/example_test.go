package nanp_test

import (
	"errors"
	"fmt"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

func ExampleParse() {
	for _, in := range []string{"12025550123", "+1 (202) 555-0123", "tel:+12025550123;npdi", "411-555-0123"} {
		n, canonical, err := nanp.Parse(in)
		if errors.Is(err, nanp.ErrInvalid) {
			fmt.Printf("%-24q invalid\n", in)
			continue
		}
		fmt.Printf("%-24q %s NPA %d NXX %d block %d canonical %v\n", in, n, n.NPA(), n.NXX(), n.Block(), canonical)
	}
	// Output:
	// "12025550123"            12025550123 NPA 202 NXX 555 block 0 canonical true
	// "+1 (202) 555-0123"      12025550123 NPA 202 NXX 555 block 0 canonical false
	// "tel:+12025550123;npdi"  12025550123 NPA 202 NXX 555 block 0 canonical false
	// "411-555-0123"           invalid
}

func ExampleParseTelURI() {
	u, err := nanp.ParseTelURI("tel:+12025550123;rn=2025550000;npdi=yes")
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Number, u.RN, u.NPDI)
	fmt.Println(u)
	// Output:
	// 12025550123 12025550000 true
	// tel:+12025550123;npdi;rn=+12025550000
}

func ExampleTelURI_AppendSIPUser() {
	// After an LRN dip: the number is ported to the switch with LRN 202-555-0000.
	u := nanp.TelURI{Number: 2025550123, RN: 2025550000, NPDI: true}
	user := u.AppendSIPUser(make([]byte, 0, 64))
	fmt.Printf("sip:%s@gw.example.net;user=phone\n", user)
	// Output: sip:+12025550123;npdi;rn=+12025550000@gw.example.net;user=phone
}
