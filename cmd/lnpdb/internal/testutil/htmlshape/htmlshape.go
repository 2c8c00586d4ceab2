// Package htmlshape holds what the web pages' tests share to check that
// hostile text stays text: a page's markup reduced to its shape.
package htmlshape

import (
	"strings"

	"golang.org/x/net/html"
)

// Of returns a page's markup without its text (each tag with its attribute
// names, in order) and the text alone. Two renderings whose inputs differ
// only in text must have the same shape; hostile input that changed the
// markup changes it.
func Of(page string) (tags []string, text string) {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return tags, b.String()
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			s := tok.Data
			for _, a := range tok.Attr {
				s += " " + a.Key
			}
			tags = append(tags, s)
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}
