package feed

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// NPACContentType is the media type of an NPAC "latest view" subscription
// version file posted as an update feed.
const NPACContentType = "application/x-npac-bdd"

// ReadNPAC reads an NPAC "latest view" subscription version file (docs/DATA.md,
// NPAC bulk data download files) as an update feed: download reason new is
// an add (A), modify an update (U), delete a delete (D). A version with LNP
// Type pool is a pooled number, answered by its block, and is not an
// update; it is passed over. A reason that is not an activity
// (success/fail, or none) is an error, as is any bad record: the first
// stops the read, naming its line and field, before fn is called at all.
//
// The file lists each subscription version's latest state once, in no
// order the format promises, and a number may have two versions in it (the
// one disconnected and the one activated after it). fn is called in
// Version Id order — the order the NPAC created the versions in — and in
// file order for equal ids, so that a number ends as its newest version
// leaves it. The file's updates are held in memory until then (a latest
// view is a day's or an hour's activity).
func ReadNPAC(r io.Reader, name string, fn func(format.Update) error) error {
	type versioned struct {
		id uint64
		u  format.Update
	}
	var all []versioned
	err := source.ReadSubscriptionVersions(r, name, source.Options{}, func(v *source.SV) error {
		if v.LNPType == source.LNPTypePool {
			return nil
		}
		var a format.Action
		switch v.Reason {
		case source.ReasonNew:
			a = format.Add
		case source.ReasonModify:
			a = format.Modify
		case source.ReasonDelete:
			a = format.Delete
		default:
			reason := "empty"
			if v.Reason != source.ReasonUnknown {
				reason = fmt.Sprintf("%d (success/fail)", v.Reason)
			}
			return &source.RowError{File: name, Line: v.Line, Column: "download_reason",
				Reason: "not an activity (0 new, 1 delete, 2 modify): " + reason}
		}
		all = append(all, versioned{v.VersionID, format.Update{Action: a, TN: uint64(v.TN), LRN: uint64(v.LRN), SPID: v.SPID, ActivatedAt: v.ActivatedAt, SVType: v.SVType}})
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].id < all[j].id })
	for _, v := range all {
		if err := fn(v.u); err != nil {
			return err
		}
	}
	return nil
}

// ParseNPAC parses a whole latest-view file (see ReadNPAC).
func ParseNPAC(body []byte) ([]format.Update, error) {
	var ups []format.Update
	err := ReadNPAC(bytes.NewReader(body), "feed", func(u format.Update) error {
		ups = append(ups, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ups, nil
}

// ReadAny reads an update feed in either shape: CSV (its header names the
// columns) or an NPAC latest-view file (pipe-separated records, no
// header), told apart by the first line that is not blank.
func ReadAny(r io.Reader, name string, fn func(format.Update) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(64 << 10) // a short read is the whole feed
	if isNPAC(head) {
		return ReadNPAC(br, name, fn)
	}
	return Read(br, name, fn)
}

// isNPAC reports whether the first line of head that is not blank is a
// pipe-separated record rather than a CSV header.
func isNPAC(head []byte) bool {
	for len(head) > 0 {
		i := bytes.IndexAny(head, "\r\n")
		line := head
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\ufeff")))
		if len(line) > 0 {
			return bytes.IndexByte(line, '|') >= 0 && bytes.IndexByte(line, ',') < 0
		}
	}
	return false
}
