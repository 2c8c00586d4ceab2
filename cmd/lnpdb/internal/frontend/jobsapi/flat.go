package jobsapi

import (
	"strings"
	"unicode/utf8"
)

// flatScanner fills a results row from an NDJSON answer line without
// decoding it into values: it reads the JSON the answers are written in
// (objects, strings with their escapes, numbers, booleans, null, and lists
// of plain strings, numbers, booleans and null), each nested object's
// fields put in their parent.child column, and defers every line it does
// not take whole (an object or list where a column holds a value, a
// repeated key, an escape or byte encoding/json would rewrite, a
// malformed line) to the encoding/json path, whose row it otherwise
// equals byte for byte.
type flatScanner struct {
	root flatNode // the columns' paths, a node an object
	errs int      // the row index of the error column; code and details follow

	line []byte
	pos  int
	buf  []byte   // the row's values, one after another
	at   []int    // each row index's value's start in buf, or -1 for ""
	ends []int    // and its end
	keys [][]byte // the outermost object's keys of no column
	top  int      // keys of the outermost object
	code bool     // the outermost object has a key code
	trio [3][2]int
}

// maxFlatDepth is the deepest object the scanner reads; a deeper one is
// deferred.
const maxFlatDepth = 8

// flatNode is an object's members that hold columns: a member's column
// (its row index), or the object it holds.
type flatNode struct {
	names []string
	slots []int       // a name's row index, or -1
	kids  []*flatNode // the object a name holds, or nil
}

// member returns the index of name, or -1.
func (n *flatNode) member(name []byte) int {
	for i, m := range n.names {
		if m == string(name) {
			return i
		}
	}
	return -1
}

func (s *flatScanner) init(cols []string) {
	for i, col := range cols {
		n := &s.root
		for {
			name, rest, nested := strings.Cut(col, ".")
			j := n.member([]byte(name))
			if j < 0 {
				j = len(n.names)
				n.names, n.slots, n.kids = append(n.names, name), append(n.slots, -1), append(n.kids, nil)
			}
			if !nested {
				n.slots[j] = 1 + i
				break
			}
			if n.kids[j] == nil {
				n.kids[j] = &flatNode{}
			}
			n, col = n.kids[j], rest
		}
	}
	s.errs = 1 + len(cols)
	s.at = make([]int, s.errs+3)
	s.ends = make([]int, s.errs+3)
}

// fill sets row[1:] from line and reports whether it did; on false, line
// is for encoding/json to read (row may hold anything).
func (s *flatScanner) fill(row []string, line []byte) bool {
	s.line, s.pos = line, 0
	s.buf, s.keys = s.buf[:0], s.keys[:0]
	s.top, s.code = 0, false
	for i := range s.at {
		s.at[i] = -1
	}
	for i := range s.trio {
		s.trio[i] = [2]int{-1, -1}
	}
	s.space()
	if !s.is('{') || !s.object(&s.root, 0) {
		return false
	}
	s.space()
	if s.pos != len(line) {
		return false
	}
	if s.code && s.top == 3 {
		for i, t := range s.trio {
			s.at[s.errs+i], s.ends[s.errs+i] = t[0], t[1]
		}
	}
	all := string(s.buf) // the row's one allocation
	for i := 1; i < len(row); i++ {
		row[i] = ""
		if s.at[i] >= 0 {
			row[i] = all[s.at[i]:s.ends[i]]
		}
	}
	return true
}

func (s *flatScanner) space() {
	for s.pos < len(s.line) {
		switch s.line[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// is consumes c if it is the next byte.
func (s *flatScanner) is(c byte) bool {
	if s.pos < len(s.line) && s.line[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// object reads the members of an object of node, its '{' read.
func (s *flatScanner) object(node *flatNode, depth int) bool {
	if depth > maxFlatDepth || len(node.names) > 64 {
		return false
	}
	var seen uint64 // the node's names read: a repeated one, the last would win, is encoding/json's to say
	s.space()
	if s.is('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.key()
		if !ok {
			return false
		}
		s.space()
		if !s.is(':') {
			return false
		}
		s.space()
		m := node.member(key)
		if m >= 0 {
			if seen&(1<<m) != 0 {
				return false
			}
			seen |= 1 << m
		}
		if depth == 0 {
			if m < 0 {
				for _, k := range s.keys {
					if string(k) == string(key) {
						return false
					}
				}
				s.keys = append(s.keys, key)
			}
			s.top++
			s.code = s.code || string(key) == "code"
		}
		if s.pos < len(s.line) && s.line[s.pos] == '{' {
			if m < 0 || node.kids[m] == nil {
				return false // an object as a value: encoding/json writes it
			}
			s.pos++
			if !s.object(node.kids[m], depth+1) {
				return false
			}
		} else {
			start := len(s.buf)
			null, ok := s.value()
			if !ok {
				return false
			}
			at := start
			if null {
				at = -1
			}
			if m >= 0 && node.slots[m] >= 0 {
				i := node.slots[m]
				s.at[i], s.ends[i] = at, len(s.buf)
			}
			if depth == 0 {
				switch string(key) {
				case "error":
					s.trio[0] = [2]int{at, len(s.buf)}
				case "code":
					s.trio[1] = [2]int{at, len(s.buf)}
				case "details":
					s.trio[2] = [2]int{at, len(s.buf)}
				}
			}
		}
		s.space()
		if s.is(',') {
			continue
		}
		return s.is('}')
	}
}

// key reads a key of plain ASCII, no escape and no dot (a dotted key is
// not the column of the same name).
func (s *flatScanner) key() ([]byte, bool) {
	if !s.is('"') {
		return nil, false
	}
	start := s.pos
	for s.pos < len(s.line) {
		c := s.line[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.line[start : s.pos-1], true
		case c < 0x20 || c >= 0x80 || c == '\\' || c == '.':
			return nil, false
		}
		s.pos++
	}
	return nil, false
}

// value appends a scalar's or a list's column text to s.buf, and reports
// a null.
func (s *flatScanner) value() (null, ok bool) {
	if s.pos >= len(s.line) {
		return false, false
	}
	switch c := s.line[s.pos]; {
	case c == '"':
		return false, s.str()
	case c == '[':
		return false, s.list()
	case c == 'n':
		return true, s.word("null", false)
	}
	return false, s.scalar(false)
}

// scalar appends a number, true or false as written; a string too in a
// list (plain strings only, as encoding/json writes them again).
func (s *flatScanner) scalar(inList bool) bool {
	if s.pos >= len(s.line) {
		return false
	}
	switch c := s.line[s.pos]; {
	case c == 't':
		return s.word("true", true)
	case c == 'f':
		return s.word("false", true)
	case c == 'n' && inList:
		return s.word("null", true)
	case c == '"' && inList:
		start := s.pos
		for s.pos++; s.pos < len(s.line); s.pos++ {
			c := s.line[s.pos]
			if c == '"' {
				s.pos++
				s.buf = append(s.buf, s.line[start:s.pos]...)
				return true
			}
			if c < 0x20 || c >= 0x7f || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}

// word reads the literal w, and appends it if add.
func (s *flatScanner) word(w string, add bool) bool {
	if len(s.line)-s.pos < len(w) || string(s.line[s.pos:s.pos+len(w)]) != w {
		return false
	}
	s.pos += len(w)
	if add {
		s.buf = append(s.buf, w...)
	}
	return true
}

// number appends a JSON number as written: json.Number's text.
func (s *flatScanner) number() bool {
	start := s.pos
	s.is('-')
	switch {
	case s.is('0'):
	case s.digits() == 0:
		return false
	}
	if s.is('.') && s.digits() == 0 {
		return false
	}
	if s.is('e') || s.is('E') {
		_ = s.is('+') || s.is('-')
		if s.digits() == 0 {
			return false
		}
	}
	s.buf = append(s.buf, s.line[start:s.pos]...)
	return true
}

func (s *flatScanner) digits() int {
	start := s.pos
	for s.pos < len(s.line) && s.line[s.pos] >= '0' && s.line[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}

// list appends a list of plain strings, numbers, booleans and null as
// encoding/json writes it: compact.
func (s *flatScanner) list() bool {
	s.pos++
	s.buf = append(s.buf, '[')
	s.space()
	if !s.is(']') {
		for {
			s.space()
			if !s.scalar(true) {
				return false
			}
			s.space()
			if s.is(']') {
				break
			}
			if !s.is(',') {
				return false
			}
			s.buf = append(s.buf, ',')
		}
	}
	s.buf = append(s.buf, ']')
	return true
}

// str appends a string's text, its escapes decoded; invalid UTF-8 and a
// surrogate escape, which encoding/json replaces, are deferred.
func (s *flatScanner) str() bool {
	s.pos++
	for s.pos < len(s.line) {
		start := s.pos
		for s.pos < len(s.line) {
			c := s.line[s.pos]
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				break
			}
			s.pos++
		}
		s.buf = append(s.buf, s.line[start:s.pos]...)
		if s.pos >= len(s.line) {
			return false
		}
		switch c := s.line[s.pos]; {
		case c == '"':
			s.pos++
			return true
		case c < 0x20:
			return false
		case c >= 0x80:
			r, n := utf8.DecodeRune(s.line[s.pos:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			s.buf = append(s.buf, s.line[s.pos:s.pos+n]...)
			s.pos += n
		default: // '\\'
			if s.pos+1 >= len(s.line) {
				return false
			}
			e := s.line[s.pos+1]
			s.pos += 2
			switch e {
			case '"', '\\', '/':
				s.buf = append(s.buf, e)
			case 'b':
				s.buf = append(s.buf, '\b')
			case 'f':
				s.buf = append(s.buf, '\f')
			case 'n':
				s.buf = append(s.buf, '\n')
			case 'r':
				s.buf = append(s.buf, '\r')
			case 't':
				s.buf = append(s.buf, '\t')
			case 'u':
				r, ok := s.hex4()
				if !ok || r >= 0xd800 && r < 0xe000 {
					return false
				}
				s.buf = utf8.AppendRune(s.buf, r)
			default:
				return false
			}
		}
	}
	return false
}

func (s *flatScanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.line) {
		return 0, false
	}
	var r rune
	for _, c := range s.line[s.pos : s.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.pos += 4
	return r, true
}
