package source

import (
	"bytes"
	"fmt"
	"io"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// This file reads NPAC SMS bulk data download (BDD) files: subscription
// versions, number pool blocks and the network data files (SPID, LRN,
// NPA-NXX, NPA-NXX-X). docs/DATA.md ("NPAC bulk data download files") gives
// each field, the source it was read from and how lnpdb reads it.
//
// Every BDD record is one line of '|'-separated, variable-length fields, no
// header, ended by CR (ASCII 13) as the FRS specifies, or by LF or CRLF as
// files rewritten on other systems have it. Fields a release added at the
// end of a record may be absent (an older LSMS writes fewer); an absent
// field reads as an empty one.

// maxBDDFields bounds the fields of a record that are looked at; later ones
// are counted in Fields but not kept.
const maxBDDFields = 40

// bddReader splits a BDD file into records and fields, reusing its buffers:
// a record costs no allocation.
type bddReader struct {
	*lineSource
	f   [maxBDDFields][]byte
	n   int // fields in the record, up to maxBDDFields
	all int // fields in the record
	err error
}

func newBDDReader(r io.Reader, file string, opt Options) *bddReader {
	return &bddReader{lineSource: newLineSource(r, file, opt)}
}

// next moves to the next record that is not blank and splits it into
// fields, trimmed of spaces. It returns false at the end of the file or
// on an error, which b.err holds.
func (b *bddReader) next() bool {
	for {
		rec, ok, err := b.lineSource.next()
		if err != nil || !ok {
			b.err = err
			return false
		}
		if isBlank(rec) {
			b.count.Blank++
			continue
		}
		b.n, b.all = 0, 0
		for {
			i := bytes.IndexByte(rec, '|')
			var fld []byte
			if i < 0 {
				fld = rec
			} else {
				fld, rec = rec[:i], rec[i+1:]
			}
			if b.n < len(b.f) {
				b.f[b.n] = bytes.TrimSpace(fld)
				b.n++
			}
			b.all++
			if i < 0 {
				break
			}
		}
		return true
	}
}

// field returns field i (0-based), or nil if the record has fewer fields.
func (b *bddReader) field(i int) []byte {
	if i < b.n {
		return b.f[i]
	}
	return nil
}

// want checks that the record has at least n fields.
func (b *bddReader) want(n int) (ok bool, err error) {
	if b.all >= n {
		return true, nil
	}
	return false, b.failf("", fmt.Sprintf("record has %d fields, want at least %d", b.all, n), nil)
}

// badField is a field that failed its check: the column it names in a
// RowError and why.
type badField struct {
	col, reason string
	err         error
}

func (e *badField) report(b *bddReader) error { return b.failf(e.col, e.reason, e.err) }

// LNPType is a subscription version's LNP Type (FRS Table E-1).
type LNPType int8

// LNP Types. LNPTypeUnknown stands for an empty field.
const (
	LNPTypeUnknown LNPType = -1
	LNPTypeLSPP    LNPType = 0 // local service provider portability: a ported number
	LNPTypeLISP    LNPType = 1 // local intra-service provider portability
	LNPTypePool    LNPType = 2 // a pooled number (a thousands-block's own record)
)

// DownloadReason says why a record is in a download file: always New in an
// "active-like" file; the activity's reason in a "latest view" file.
type DownloadReason int8

// Download reasons.
const (
	ReasonUnknown     DownloadReason = -1 // empty field
	ReasonNew         DownloadReason = 0
	ReasonDelete      DownloadReason = 1
	ReasonModify      DownloadReason = 2
	ReasonSuccessFail DownloadReason = 3
)

// SVType is the subscription version type: what kind of service the number
// has, set by the provider that serves it. It is the table's own type
// (format.SVType: the NPAC value plus one, zero when absent), so that a
// record goes into the table as it is read.
type SVType = format.SVType

// SV Types. Values 6 to 10 are defined by the NPAC as reserved
// ("sv-type-6" …) and are read, kept and named by number.
const (
	SVTypeNone                     = format.SVTypeNone // absent or empty: an LSMS older than the field
	SVTypeWireline                 = format.SVTypeWireline
	SVTypeWireless                 = format.SVTypeWireless
	SVTypeVoIP                     = format.SVTypeVoIP
	SVTypeVoWiFi                   = format.SVTypeVoWiFi
	SVTypePrepaidWireless          = format.SVTypePrepaidWireless
	SVTypeClass2InterconnectedVoIP = format.SVTypeClass2InterconnectedVoIP
	maxSVType                      = format.MaxSVType
)

// parseSVType parses an SV Type field: the NPAC's value, 0 to 10, or empty
// for none.
func parseSVType(f []byte, col string) (SVType, *badField) {
	n, bad := parseEnum(f, int(maxSVType)-1, col)
	return SVType(n + 1), bad
}

// PointCode is a signalling point code and subsystem number a number's
// queries (CLASS, LIDB, ISVM, CNAM, WSMSC) are routed to by global title.
// DPC is the ANSI point code, network<<16 | cluster<<8 | member; Set is
// false when the fields are empty.
type PointCode struct {
	DPC uint32
	SSN uint8
	Set bool
}

// SV is one subscription version record of an NPAC subscription download
// file. Strings are shared and stay valid after the callback returns; the
// []byte fields are views of the read buffer, valid only until it returns
// (copy what you keep): a record costs no allocation.
type SV struct {
	VersionID   uint64
	TN          nanp.Number
	LRN         nanp.Number
	SPID        string // New Current Service Provider Id, upper-case
	ActivatedAt int64  // Unix seconds, 0 if empty

	CLASS, LIDB, ISVM, CNAM PointCode

	EndUserLocationValue []byte
	EndUserLocationType  []byte
	BillingID            []byte

	LNPType LNPType
	Reason  DownloadReason
	WSMSC   PointCode

	// Added by later releases; empty or SVTypeNone when absent.
	SVType                  SVType
	AltSPID                 string // Alternative SPID, upper-case
	AltEndUserLocationValue []byte
	AltEndUserLocationType  []byte
	AltBillingID            []byte
	VoiceURI, MMSURI        []byte
	PoCURI, PRESURI, SMSURI []byte
	LastAltSPID             string // Last Alternative SPID, upper-case

	Fields int // fields the record had
	Line   int
}

// Field positions (0-based) of a subscription version record; DATA.md
// numbers them from 1 as the FRS does.
const (
	svVersionID = iota
	svTN
	svLRN
	svSPID
	svActivated
	svClassDPC
	svClassSSN
	svLIDBDPC
	svLIDBSSN
	svISVMDPC
	svISVMSSN
	svCNAMDPC
	svCNAMSSN
	svEULV
	svEULT
	svBillingID
	svLNPType
	svReason
	svWSMSCDPC
	svWSMSCSSN
	svSVType
	svAltSPID
	svAltEULV
	svAltEULT
	svAltBillingID
	svVoiceURI
	svMMSURI
	svPoCURI
	svPRESURI
	svSMSURI
	svLastAltSPID
)

// ReadSubscriptionVersions reads an NPAC subscription download file
// ("active-like" or "latest view"), calling fn for each good record; see
// [ReadCarriers] for the rules of the callback. A record needs the first
// five fields (Version Id, TN, LRN, SPID, Activation Timestamp); every later
// field may be absent or empty. The record passed to fn is reused.
func ReadSubscriptionVersions(r io.Reader, file string, opt Options, fn func(*SV) error) error {
	return readBDD(r, file, opt, 5, parseSV, fn)
}

// readBDD is the loop every BDD reader shares: a record with at least min
// fields is parsed by parse into one reused T and handed to fn; a record
// with fewer, or with a bad field, is a row error (skipped and counted
// with Options.SkipBadRows).
func readBDD[T any](r io.Reader, file string, opt Options, min int, parse func(*bddReader, *codeTable, *T) *badField, fn func(*T) error) error {
	b := newBDDReader(r, file, opt)
	var codes codeTable
	var v T
	for b.next() {
		if ok, err := b.want(min); !ok {
			if err != nil {
				return err
			}
			continue
		}
		if bad := parse(b, &codes, &v); bad != nil {
			if err := bad.report(b); err != nil {
				return err
			}
			continue
		}
		b.count.Rows++
		if err := fn(&v); err != nil {
			return err
		}
	}
	return b.err
}

func parseSV(b *bddReader, codes *codeTable, v *SV) *badField {
	*v = SV{Line: b.line, Fields: b.all}
	var bad *badField
	if v.VersionID, bad = parseID(b.field(svVersionID), "version_id"); bad != nil {
		return bad
	}
	if v.TN, bad = parseNumber(b.field(svTN), "tn"); bad != nil {
		return bad
	}
	if v.LRN, bad = parseNumber(b.field(svLRN), "lrn"); bad != nil {
		return bad
	}
	if v.SPID, bad = parseSPID(codes, b.field(svSPID), "spid", true); bad != nil {
		return bad
	}
	if v.ActivatedAt, bad = parseBDDTime(b.field(svActivated), "activated_at"); bad != nil {
		return bad
	}
	for i, pc := range [...]*PointCode{&v.CLASS, &v.LIDB, &v.ISVM, &v.CNAM} {
		col := [...]string{"class", "lidb", "isvm", "cnam"}[i]
		if *pc, bad = parsePointCode(b.field(svClassDPC+2*i), b.field(svClassSSN+2*i), col); bad != nil {
			return bad
		}
	}
	v.EndUserLocationValue = b.field(svEULV)
	v.EndUserLocationType = b.field(svEULT)
	v.BillingID = b.field(svBillingID)
	n, bad := parseEnum(b.field(svLNPType), 2, "lnp_type")
	if bad != nil {
		return bad
	}
	v.LNPType = LNPType(n)
	if n, bad = parseEnum(b.field(svReason), 3, "download_reason"); bad != nil {
		return bad
	}
	v.Reason = DownloadReason(n)
	if v.WSMSC, bad = parsePointCode(b.field(svWSMSCDPC), b.field(svWSMSCSSN), "wsmsc"); bad != nil {
		return bad
	}
	if v.SVType, bad = parseSVType(b.field(svSVType), "sv_type"); bad != nil {
		return bad
	}
	if v.AltSPID, bad = parseSPID(codes, b.field(svAltSPID), "alt_spid", false); bad != nil {
		return bad
	}
	v.AltEndUserLocationValue = b.field(svAltEULV)
	v.AltEndUserLocationType = b.field(svAltEULT)
	v.AltBillingID = b.field(svAltBillingID)
	v.VoiceURI = b.field(svVoiceURI)
	v.MMSURI = b.field(svMMSURI)
	v.PoCURI = b.field(svPoCURI)
	v.PRESURI = b.field(svPRESURI)
	v.SMSURI = b.field(svSMSURI)
	if v.LastAltSPID, bad = parseSPID(codes, b.field(svLastAltSPID), "last_alt_spid", false); bad != nil {
		return bad
	}
	return nil
}

// PoolBlock is one record of an NPAC number pool block download file: a
// thousands-block (NPA-NXX-X) and the LRN and SPID its numbers route to.
type PoolBlock struct {
	BlockID     uint64
	NPA, NXX, X int
	LRN         nanp.Number
	SPID        string // New Current Service Provider Id, upper-case
	ActivatedAt int64  // Unix seconds, 0 if empty

	CLASS, LIDB, ISVM, CNAM, WSMSC PointCode

	Reason  DownloadReason // ReasonUnknown if absent
	SVType  SVType         // SVTypeNone if absent
	AltSPID string         // "" if absent

	Fields int
	Line   int
}

const (
	blkID = iota
	blkNPANXXX
	blkLRN
	blkSPID
	blkActivated
	blkClassDPC
	blkWSMSCDPC = blkClassDPC + 8
	blkWSMSCSSN = blkWSMSCDPC + 1
	blkReason   = blkWSMSCSSN + 1
	blkSVType   = blkReason + 1
	blkAltSPID  = blkSVType + 1
)

// ReadPoolBlocks reads an NPAC number pool block download file, calling fn
// for each good record; see [ReadCarriers] for the rules of the callback.
// A record needs Block Id, NPA-NXX-X, LRN, SPID and Activation Timestamp;
// the later fields may be absent.
func ReadPoolBlocks(r io.Reader, file string, opt Options, fn func(*PoolBlock) error) error {
	return readBDD(r, file, opt, 5, parsePoolBlock, fn)
}

func parsePoolBlock(b *bddReader, codes *codeTable, v *PoolBlock) *badField {
	*v = PoolBlock{Line: b.line, Fields: b.all}
	var bad *badField
	if v.BlockID, bad = parseID(b.field(blkID), "block_id"); bad != nil {
		return bad
	}
	if v.NPA, v.NXX, v.X, bad = parseNPANXX(b.field(blkNPANXXX), true, "npa_nxx_x"); bad != nil {
		return bad
	}
	if v.LRN, bad = parseNumber(b.field(blkLRN), "lrn"); bad != nil {
		return bad
	}
	if v.SPID, bad = parseSPID(codes, b.field(blkSPID), "spid", true); bad != nil {
		return bad
	}
	if v.ActivatedAt, bad = parseBDDTime(b.field(blkActivated), "activated_at"); bad != nil {
		return bad
	}
	for i, pc := range [...]*PointCode{&v.CLASS, &v.LIDB, &v.ISVM, &v.CNAM, &v.WSMSC} {
		col := [...]string{"class", "lidb", "isvm", "cnam", "wsmsc"}[i]
		if *pc, bad = parsePointCode(b.field(blkClassDPC+2*i), b.field(blkClassDPC+2*i+1), col); bad != nil {
			return bad
		}
	}
	n, bad := parseEnum(b.field(blkReason), 3, "download_reason")
	if bad != nil {
		return bad
	}
	v.Reason = DownloadReason(n)
	if v.SVType, bad = parseSVType(b.field(blkSVType), "sv_type"); bad != nil {
		return bad
	}
	v.AltSPID, bad = parseSPID(codes, b.field(blkAltSPID), "alt_spid", false)
	return bad
}

// SPType is a service provider's type in the NPAC SPID download file.
type SPType int8

// Service provider types; 4 and 5 are reserved by the NPAC and kept by
// number.
const (
	SPTypeNone                     SPType = -1 // absent or empty
	SPTypeWireline                 SPType = 0
	SPTypeWireless                 SPType = 1
	SPTypeNonCarrier               SPType = 2
	SPTypeClass1InterconnectedVoIP SPType = 3
	maxSPType                      SPType = 5
)

// ServiceProvider is one record of the NPAC SPID download file. Name is a
// string of its own (the file has a few thousand records).
type ServiceProvider struct {
	SPID string
	Name string
	Type SPType
	Line int
}

// ReadServiceProviders reads the NPAC SPID download file: SPID | Name |
// Service Provider Type (the type may be absent).
func ReadServiceProviders(r io.Reader, file string, opt Options, fn func(*ServiceProvider) error) error {
	return readBDD(r, file, opt, 2, parseServiceProvider, fn)
}

func parseServiceProvider(b *bddReader, codes *codeTable, v *ServiceProvider) *badField {
	*v = ServiceProvider{Line: b.line}
	var bad *badField
	if v.SPID, bad = parseSPID(codes, b.field(0), "spid", true); bad != nil {
		return bad
	}
	name := b.field(1)
	if len(name) == 0 {
		return &badField{col: "name", reason: "empty"}
	}
	n, bad := parseEnum(b.field(2), int(maxSPType), "sp_type")
	if bad != nil {
		return bad
	}
	v.Name, v.Type = string(name), SPType(n)
	return nil
}

// NetworkLRN is one record of the NPAC LRN download file: an LRN and the
// SPID that owns it.
type NetworkLRN struct {
	ID        uint64
	SPID      string
	LRN       nanp.Number
	CreatedAt int64 // Unix seconds, 0 if absent
	Line      int
}

// ReadNetworkLRNs reads the NPAC LRN download file: LRN Id | SPID | LRN |
// Creation Timestamp (the timestamp may be absent).
func ReadNetworkLRNs(r io.Reader, file string, opt Options, fn func(*NetworkLRN) error) error {
	return readBDD(r, file, opt, 3, parseNetworkLRN, fn)
}

func parseNetworkLRN(b *bddReader, codes *codeTable, v *NetworkLRN) *badField {
	*v = NetworkLRN{Line: b.line}
	var bad *badField
	if v.ID, bad = parseID(b.field(0), "id"); bad != nil {
		return bad
	}
	if v.SPID, bad = parseSPID(codes, b.field(1), "spid", true); bad != nil {
		return bad
	}
	if v.LRN, bad = parseNumber(b.field(2), "lrn"); bad != nil {
		return bad
	}
	v.CreatedAt, bad = parseBDDTime(b.field(3), "created_at")
	return bad
}

// NetworkCode is one record of the NPAC NPA-NXX download file (X = -1) or
// NPA-NXX-X download file (X = 0 to 9): a code or thousands-block and the
// SPID that holds it.
type NetworkCode struct {
	ID          uint64
	SPID        string
	NPA, NXX, X int
	EffectiveAt int64 // Unix seconds, 0 if empty
	CreatedAt   int64 // Unix seconds, 0 if absent
	Line        int
}

// ReadNetworkNPANXX reads the NPAC NPA-NXX download file: NPA-NXX Id | SPID
// | NPA-NXX | Effective Timestamp | Creation Timestamp (the timestamps may
// be absent).
func ReadNetworkNPANXX(r io.Reader, file string, opt Options, fn func(*NetworkCode) error) error {
	return readNetworkCodes(r, file, opt, false, fn)
}

// ReadNetworkNPANXXX reads the NPAC NPA-NXX-X download file: NPA-NXX-X Id |
// SPID | NPA-NXX-X | Effective Timestamp | Creation Timestamp (the
// timestamps may be absent).
func ReadNetworkNPANXXX(r io.Reader, file string, opt Options, fn func(*NetworkCode) error) error {
	return readNetworkCodes(r, file, opt, true, fn)
}

func readNetworkCodes(r io.Reader, file string, opt Options, withX bool, fn func(*NetworkCode) error) error {
	col := "npa_nxx"
	if withX {
		col = "npa_nxx_x"
	}
	return readBDD(r, file, opt, 3, func(b *bddReader, codes *codeTable, v *NetworkCode) *badField {
		*v = NetworkCode{Line: b.line}
		var bad *badField
		if v.ID, bad = parseID(b.field(0), "id"); bad != nil {
			return bad
		}
		if v.SPID, bad = parseSPID(codes, b.field(1), "spid", true); bad != nil {
			return bad
		}
		if v.NPA, v.NXX, v.X, bad = parseNPANXX(b.field(2), withX, col); bad != nil {
			return bad
		}
		if v.EffectiveAt, bad = parseBDDTime(b.field(3), "effective_at"); bad != nil {
			return bad
		}
		v.CreatedAt, bad = parseBDDTime(b.field(4), "created_at")
		return bad
	}, fn)
}

// parseID parses a record id: 1 to 19 digits; empty is 0.
func parseID(f []byte, col string) (uint64, *badField) {
	if len(f) > 19 {
		return 0, &badField{col: col, reason: "not 1 to 19 digits: " + quote(string(f))}
	}
	var n uint64
	for _, c := range f {
		if !isDigit(c) {
			return 0, &badField{col: col, reason: "not 1 to 19 digits: " + quote(string(f))}
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}

func parseNumber(f []byte, col string) (nanp.Number, *badField) {
	n, err := numberBytes(f)
	if err != nil {
		return 0, &badField{col: col, reason: numberBytesReason(f, err), err: err}
	}
	return n, nil
}

// parseSPID parses a SPID field; an empty optional one is "".
func parseSPID(codes *codeTable, f []byte, col string, required bool) (string, *badField) {
	if len(f) == 0 && !required {
		return "", nil
	}
	if !isCode(f) {
		return "", &badField{col: col, reason: emptyOr(f, "not 4 letters and digits: "+quote(string(f)))}
	}
	return codes.getBytes(f), nil
}

func parseBDDTime(f []byte, col string) (int64, *badField) {
	t, err := parseTime(f)
	if err != nil {
		return 0, &badField{col: col, reason: fmt.Sprintf("%v: %s", err, quote(string(f))), err: err}
	}
	return t, nil
}

// parseEnum parses a small enumerated field: one or two digits, 0 to max;
// empty is -1.
func parseEnum(f []byte, max int, col string) (int, *badField) {
	if len(f) == 0 {
		return -1, nil
	}
	n, ok := atoi(f)
	if !ok || len(f) > 2 || n > max {
		return 0, &badField{col: col, reason: fmt.Sprintf("not a number from 0 to %d: %s", max, quote(string(f)))}
	}
	return n, nil
}

// parsePointCode parses a DPC and its SSN. The DPC is the ANSI point code as
// its three octets in decimal, network, cluster and member: 9 digits, or
// three numbers of 1 to 3 digits separated by '-' or '.'. The SSN is 0 to
// 255. Both empty is no point code; one without the other is an error.
func parsePointCode(dpc, ssn []byte, col string) (PointCode, *badField) {
	if len(dpc) == 0 && len(ssn) == 0 {
		return PointCode{}, nil
	}
	var oct [3]int
	ok := len(dpc) > 0
	if ok && len(dpc) == 9 {
		for i := range oct {
			oct[i], ok = atoi(dpc[3*i : 3*i+3])
			if !ok {
				break
			}
		}
	} else if ok {
		rest := dpc
		for i := range oct {
			j := bytes.IndexAny(rest, "-.")
			part := rest
			if i < 2 {
				if j < 0 {
					ok = false
					break
				}
				part, rest = rest[:j], rest[j+1:]
			}
			if len(part) > 3 {
				ok = false
				break
			}
			if oct[i], ok = atoi(part); !ok {
				break
			}
		}
	}
	if ok {
		for _, o := range oct {
			ok = ok && o <= 255
		}
	}
	if !ok {
		return PointCode{}, &badField{col: col + "_dpc", reason: "not a point code (9 digits, three octets): " + quote(string(dpc))}
	}
	s, sok := atoi(ssn)
	if !sok || len(ssn) > 3 || s > 255 {
		return PointCode{}, &badField{col: col + "_ssn", reason: "not a subsystem number 0 to 255: " + quote(string(ssn))}
	}
	return PointCode{DPC: uint32(oct[0])<<16 | uint32(oct[1])<<8 | uint32(oct[2]), SSN: uint8(s), Set: true}, nil
}

// parseNPANXX parses an NPA-NXX (6 digits) or NPA-NXX-X (7 digits), written
// with or without '-' between the parts; x is -1 for an NPA-NXX.
func parseNPANXX(f []byte, withX bool, col string) (npa, nxx, x int, bad *badField) {
	var d [7]byte
	n := 0
	for i, c := range f {
		switch {
		case isDigit(c) && n < len(d):
			d[n] = c
			n++
		case c == '-' && (i == 3 || i == 7) && n == i-i/4:
		default:
			n = -1
		}
		if n < 0 {
			break
		}
	}
	want, shape := 6, "NPA-NXX"
	if withX {
		want, shape = 7, "NPA-NXX-X"
	}
	if n != want {
		return 0, 0, 0, &badField{col: col, reason: emptyOr(f, fmt.Sprintf("not an %s of %d digits: %s", shape, want, quote(string(f))))}
	}
	npa, _ = atoi(d[0:3])
	nxx, _ = atoi(d[3:6])
	for i, check := range [...]func(int) error{nanp.CheckNPA, nanp.CheckNXX} {
		c := npa
		if i == 1 {
			c = nxx
		}
		if err := check(c); err != nil {
			rule, _ := nanp.Rule(err)
			return 0, 0, 0, &badField{col: col, reason: rule + ": " + quote(string(f)), err: err}
		}
	}
	x = -1
	if withX {
		x = int(d[6] - '0')
	}
	return npa, nxx, x, nil
}
