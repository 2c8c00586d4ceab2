package gen

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// places.csv is the reference table behind every generated location: real
// NPAs (area codes) with their real states, and for each a few real cities
// with their county, a plausible ZIP code and LATA, and their IANA time zone.
// A row with an empty county is an overlay NPA serving a city already listed
// for its state: it inherits that city's attributes.
//
//go:embed places.csv
var placesCSV string

// place is a rate center: the unit of location a block row points at.
type place struct {
	state, rateCenter, city, county, zip, lata, tz string
}

// npaRef is one real NPA and the places (indexes into reference.places) it
// serves; the first is its main city.
type npaRef struct {
	npa    int
	state  string
	places []int
}

type reference struct {
	places []place  // in table order, each (state, rate center) once
	npas   []npaRef // ascending by NPA
}

var loadReference = sync.OnceValues(func() (*reference, error) { return parseReference(placesCSV) })

func parseReference(text string) (*reference, error) {
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("gen: places.csv: %w", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("gen: places.csv: no rows")
	}
	ref := &reference{}
	byKey := map[string]int{} // state + "|" + city → place
	byNPA := map[int]*npaRef{}
	for i, r := range rows[1:] {
		line := i + 2
		if len(r) != 7 {
			return nil, fmt.Errorf("gen: places.csv:%d: %d fields, want 7", line, len(r))
		}
		npa, err := strconv.Atoi(r[0])
		if err != nil || !nanp.ValidNPA(npa) {
			return nil, fmt.Errorf("gen: places.csv:%d: invalid NPA %q", line, r[0])
		}
		state, city := r[1], r[2]
		key := state + "|" + city
		p, seen := byKey[key]
		switch {
		case r[3] == "" && !seen:
			return nil, fmt.Errorf("gen: places.csv:%d: overlay city %s, %s is not listed before", line, city, state)
		case r[3] != "" && seen:
			return nil, fmt.Errorf("gen: places.csv:%d: city %s, %s listed twice", line, city, state)
		case !seen:
			p = len(ref.places)
			byKey[key] = p
			ref.places = append(ref.places, place{
				state: state, rateCenter: rateCenterName(city), city: city,
				county: r[3], zip: r[4], lata: r[5], tz: r[6],
			})
		}
		n := byNPA[npa]
		if n == nil {
			n = &npaRef{npa: npa, state: state}
			byNPA[npa] = n
		}
		if n.state != state {
			return nil, fmt.Errorf("gen: places.csv:%d: NPA %d in two states (%s, %s)", line, npa, n.state, state)
		}
		n.places = append(n.places, p)
	}
	for _, n := range byNPA {
		ref.npas = append(ref.npas, *n)
	}
	sort.Slice(ref.npas, func(i, j int) bool { return ref.npas[i].npa < ref.npas[j].npa })
	return ref, nil
}

// rateCenterName turns a city into a LERG-style rate center name: upper
// case, no periods ("St. Louis" → "ST LOUIS").
func rateCenterName(city string) string {
	return strings.ToUpper(strings.ReplaceAll(city, ".", ""))
}
