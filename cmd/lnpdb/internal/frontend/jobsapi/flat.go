package jobsapi

import "unicode/utf8"

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
	cols     map[string]int  // a column's path to its index in the row
	prefixes map[string]bool // the paths of the objects holding columns
	errs     int             // the row index of the error column; code and details follow

	line []byte
	pos  int
	buf  []byte   // the row's values, one after another
	at   []int    // each row index's value's start in buf, or -1 for ""
	ends []int    // and its end
	path []byte   // the dotted path of the value read
	keys [][]byte // the keys of the objects open, outermost first
	top  int      // keys of the outermost object
	code bool     // the outermost object has a key code
	trio [3][2]int
}

// maxFlatDepth is the deepest object the scanner reads; a deeper one is
// deferred.
const maxFlatDepth = 8

func (s *flatScanner) init(cols []string) {
	s.cols = make(map[string]int, len(cols))
	s.prefixes = map[string]bool{}
	for i, col := range cols {
		s.cols[col] = 1 + i
		for j := range col {
			if col[j] == '.' {
				s.prefixes[col[:j]] = true
			}
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
	s.buf, s.path, s.keys = s.buf[:0], s.path[:0], s.keys[:0]
	s.top, s.code = 0, false
	for i := range s.at {
		s.at[i] = -1
	}
	for i := range s.trio {
		s.trio[i] = [2]int{-1, -1}
	}
	s.space()
	if !s.is('{') || !s.object(0) {
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

// object reads an object's members, its '{' read, its path's prefix in
// s.path.
func (s *flatScanner) object(depth int) bool {
	if depth > maxFlatDepth {
		return false
	}
	base, open := len(s.path), len(s.keys)
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
		for _, k := range s.keys[open:] {
			if string(k) == string(key) {
				return false // the last would win: encoding/json's to say
			}
		}
		s.keys = append(s.keys, key)
		s.space()
		if !s.is(':') {
			return false
		}
		s.space()
		s.path = append(s.path[:base], key...)
		if depth == 0 {
			s.top++
			s.code = s.code || string(key) == "code"
		}
		if s.pos < len(s.line) && s.line[s.pos] == '{' {
			if !s.prefixes[string(s.path)] {
				return false // an object as a value: encoding/json writes it
			}
			s.pos++
			s.path = append(s.path, '.')
			if !s.object(depth + 1) {
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
			if i, ok := s.cols[string(s.path)]; ok {
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
		s.path = s.path[:base]
		s.space()
		if s.is(',') {
			continue
		}
		if s.is('}') {
			s.keys = s.keys[:open]
			return true
		}
		return false
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
