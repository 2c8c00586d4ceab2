// Package testchromium starts Debian's chromium, headless, for a test that
// drives the web pages as a browser does.
package testchromium

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is Debian's chromium.
const Path = "/usr/bin/chromium"

// Tab starts a headless chromium for t and returns a tab of it, with the
// Content Security Policy refusals its pages' consoles reported so far;
// both end with t. Without chromium, t is skipped with the package it
// needs.
func Tab(t testing.TB) (context.Context, func() []string) {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		t.Skip("needs a browser: Debian's chromium package (" + Path + ")")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(Path), chromedp.WindowSize(1200, 900))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var csp []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, "Content Security Policy") {
				mu.Lock()
				csp = append(csp, m.Text)
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), csp...)
	}
}
