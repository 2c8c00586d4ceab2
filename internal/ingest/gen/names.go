package gen

// Word lists for invented names. Carrier and provider names are coined so
// that none is a real company's; CNAM names are built from common US
// surnames and given names and from generic business words.

// Carrier types as carriers.csv writes them.
const (
	typeWireless = "WIRELESS"
	typeILEC     = "ILEC"
	typeCLEC     = "CLEC"
	typeVOIP     = "VOIP"
)

// carrierTypes are the types a local (non-national) carrier is drawn from,
// weighted like the OCN population: many small ILECs and CLECs, fewer
// wireless and VoIP providers.
var (
	carrierTypes       = []string{typeILEC, typeCLEC, typeWireless, typeVOIP}
	carrierTypeWeights = cumulative([]float64{0.32, 0.38, 0.14, 0.16})
	// nationalTypes are the types of the largest carriers, in rank order.
	nationalTypes = []string{
		typeWireless, typeWireless, typeILEC, typeWireless, typeCLEC, typeVOIP,
		typeILEC, typeWireless, typeVOIP, typeCLEC, typeILEC, typeCLEC,
	}
)

var (
	nameHeads = []string{
		"Al", "Bri", "Cor", "Dal", "El", "Fen", "Gar", "Hal", "Is", "Jor", "Kel", "Lum",
		"Mar", "Nor", "Ol", "Pen", "Quin", "Ros", "Sal", "Tor", "Ul", "Ver", "Wen", "Xan",
		"Yor", "Zel", "Ash", "Bel", "Cal", "Dor", "Es", "Fal", "Gil", "Hav", "Ket", "Lor",
	}
	nameTails = []string{
		"ton", "vale", "mont", "ix", "ora", "ex", "wick", "field", "stead", "ara",
		"ridge", "wyn", "ova", "brook", "ia", "haven", "dell", "ston", "ona", "lyn",
	}
	typeWords = map[string][]string{
		typeWireless: {"Wireless", "Mobile", "Cellular", "PCS", "Wireless Partners"},
		typeILEC:     {"Telephone Company", "Telephone Cooperative", "Rural Telephone", "Telco", "Mutual Telephone"},
		typeCLEC:     {"Communications", "Networks", "Fiber", "Telecom", "Broadband"},
		typeVOIP:     {"Voice", "VoIP", "Cloud Telecom", "Connect", "Voice Services"},
	}
	legalSuffixes = []string{"", "", ", Inc.", ", LLC", " Corp."}

	// messagingProviders are invented messaging providers (the provider a
	// number's texts are routed through).
	messagingProviders = []string{
		"Relaywave", "Textbridge", "Signalpost", "Courierline",
		"Pingwell Messaging", "Loomtext", "Parcelnet SMS", "Brightwire",
	}

	surnames = []string{
		"SMITH", "JOHNSON", "WILLIAMS", "BROWN", "JONES", "GARCIA", "MILLER", "DAVIS",
		"RODRIGUEZ", "MARTINEZ", "HERNANDEZ", "LOPEZ", "GONZALEZ", "WILSON", "ANDERSON",
		"THOMAS", "TAYLOR", "MOORE", "JACKSON", "MARTIN", "LEE", "PEREZ", "THOMPSON",
		"WHITE", "HARRIS", "SANCHEZ", "CLARK", "RAMIREZ", "LEWIS", "ROBINSON", "WALKER",
		"YOUNG", "ALLEN", "KING", "WRIGHT", "SCOTT", "TORRES", "NGUYEN", "HILL", "FLORES",
		"GREEN", "ADAMS", "NELSON", "BAKER", "HALL", "RIVERA", "CAMPBELL", "MITCHELL",
		"CARTER", "ROBERTS", "O'BRIEN", "KOWALSKI", "WASHINGTON", "CHRISTENSEN", "PATEL",
		"KIM", "CHEN", "MURPHY", "SULLIVAN", "FITZGERALD",
	}
	givenNames = []string{
		"JAMES", "MARY", "JOHN", "PATRICIA", "ROBERT", "JENNIFER", "MICHAEL", "LINDA",
		"DAVID", "ELIZABETH", "WILLIAM", "BARBARA", "RICHARD", "SUSAN", "JOSEPH", "JESSICA",
		"THOMAS", "SARAH", "CHARLES", "KAREN", "MARIA", "DANIEL", "NANCY", "MATTHEW", "LISA",
		"ANTHONY", "BETTY", "MARK", "SANDRA", "DONALD", "ASHLEY", "STEVEN", "KIMBERLY",
		"PAUL", "EMILY", "ANDREW", "DONNA", "JOSHUA", "MICHELLE", "KENNETH", "CAROL",
		"KEVIN", "AMANDA", "BRIAN", "MELISSA", "GEORGE", "DEBORAH", "TIMOTHY", "LAURA",
		"JOSE", "ANA", "LUIS", "CARMEN", "WEI", "PRIYA",
	}
	businessHeads = []string{
		"ACME", "SUMMIT", "LAKESIDE", "NORTHSTAR", "BLUE SKY", "GOLDEN", "RIVERSIDE",
		"PIONEER", "EAGLE", "MAPLE", "CITY", "FIRST", "METRO", "VALLEY", "PRIME",
		"SUNRISE", "COASTAL", "HERITAGE", "LIBERTY", "OAKWOOD", "TRI COUNTY", "ALLSTAR",
	}
	businessTails = []string{
		"PLUMBING", "DENTAL", "AUTO REPAIR", "BAKERY", "PHARMACY", "LAW OFFICE",
		"ROOFING", "INSURANCE", "REALTY", "CHURCH", "PIZZA", "MOTORS", "CLINIC",
		"SALON", "HARDWARE", "ELECTRIC", "FLORIST", "CAFE", "CPA", "VET CLINIC",
		"HVAC", "SCHOOL", "BANK", "TOWING",
	}
)

// Trust spam types and their weights among complaint records.
var (
	spamTypes       = []string{"NONE", "SPAM", "SCAM", "ROBOCALL", "TELEMARKETER"}
	spamTypeWeights = cumulative([]float64{0.30, 0.25, 0.10, 0.20, 0.15})
)

// appendCNAM appends an invented caller name of at most 15 characters, upper
// case as CNAM databases hold them: "SMITH JOHN", "GARCIA MARIA L",
// "ACME PLUMBING". Longer names are cut at 15 as a CNAM provider would.
func appendCNAM(b []byte, r *rng) []byte {
	start := len(b)
	if r.chance(0.7) {
		b = append(b, surnames[r.intn(len(surnames))]...)
		b = append(b, ' ')
		b = append(b, givenNames[r.intn(len(givenNames))]...)
		if r.chance(0.15) {
			b = append(b, ' ', byte('A'+r.intn(26)))
		}
	} else {
		b = append(b, businessHeads[r.intn(len(businessHeads))]...)
		b = append(b, ' ')
		b = append(b, businessTails[r.intn(len(businessTails))]...)
	}
	if len(b)-start > maxCNAM {
		b = b[:start+maxCNAM]
	}
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// maxCNAM is the longest caller name CNAM carries.
const maxCNAM = 15
