// Package config owns how settings reach the lnpdb binary besides its command
// line: every flag of a command may also be given in the environment, and a
// secret in a file, so that deployments (containers, systemd's
// EnvironmentFile=, Kubernetes secrets mounted as files) need not put
// passwords on a command line that ps shows.
//
// For a flag --some-name the sources are, first found wins:
//
//  1. the command line: --some-name VALUE, or for a secret --some-name-file
//     PATH (the file's content, surrounding white space trimmed);
//  2. the environment: LNPDB_SOME_NAME=VALUE, or LNPDB_SOME_NAME_FILE=PATH;
//  3. the flag's default.
//
// Two sources of one rank (--x and --x-file, or LNPDB_X and LNPDB_X_FILE)
// are an error rather than a guess. Values from the environment or a file
// are never printed: errors name the variable or the file, not the value.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// Prefix starts the name of every environment variable read.
const Prefix = "LNPDB_"

// FileSuffix ends the name of a variable, and of a secret's second flag, that
// names a file holding the value.
const (
	FileSuffix     = "_FILE"
	fileFlagSuffix = "-file"
)

// ErrConflict is matched by the error for two sources of one rank.
var ErrConflict = errors.New("config: given twice")

// EnvName returns the environment variable of flag name: "updates-log" →
// "LNPDB_UPDATES_LOG".
func EnvName(name string) string {
	return Prefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// Secret defines a string flag name holding a secret, and its file form
// name-file: --accounts DSN or --accounts-file PATH.
func Secret(fs *pflag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fs.Var((*secret)(p), name, usage)
	fs.Var(&secretFile{p}, name+fileFlagSuffix, "read --"+name+" from this `file` (its content, white space around it trimmed)")
}

// secret is the flag.Value of a secret: a string whose flags Apply and
// Annotate treat as secrets.
type secret string

func (s *secret) String() string {
	if s == nil {
		return ""
	}
	return string(*s)
}
func (s *secret) Set(v string) error { *s = secret(v); return nil }
func (s *secret) Type() string       { return "string" }

// secretFile is the flag.Value of a secret's file form.
type secretFile struct{ p *string }

func (s *secretFile) String() string { return "" }
func (s *secretFile) Type() string   { return "string" }
func (s *secretFile) Set(path string) error {
	v, err := ReadFile(path)
	if err != nil {
		return err
	}
	*s.p = v
	return nil
}

// IsSecret reports whether f was defined by Secret (either of its two flags).
func IsSecret(f *pflag.Flag) bool {
	switch f.Value.(type) {
	case *secret, *secretFile:
		return true
	}
	return false
}

func isFileForm(f *pflag.Flag) bool {
	_, ok := f.Value.(*secretFile)
	return ok
}

// ReadFile returns the content of the file at path with the white space
// around it trimmed (a trailing newline, as editors and echo leave). An empty
// file is an error: an empty secret is never what was meant.
func ReadFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}

// Annotate ends every flag's usage with the environment variables it reads,
// so that fs.PrintDefaults lists them. Call it once, after every flag is
// defined.
func Annotate(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		env := EnvName(f.Name)
		switch {
		case isFileForm(f), isAlias(f): // read through its secret's (or its new name's) variables
		case notFlagSetting(f):
		case IsSecret(f):
			f.Usage += fmt.Sprintf(" [env %s or %s%s]", env, env, FileSuffix)
		default:
			f.Usage += fmt.Sprintf(" [env %s]", env)
		}
	})
}

// Apply sets every flag of the parsed fs that the command line did not set
// from the environment that lookup reads (os.LookupEnv in the binary). A
// flag's LNPDB_NAME holds its value; LNPDB_NAME_FILE names a file holding it.
func Apply(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	var errs []error
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	for _, name := range names {
		f := fs.Lookup(name)
		if isFileForm(f) || isAlias(f) || notFlagSetting(f) {
			continue // read through its secret's (or its new name's) variables
		}
		if IsSecret(f) && set[name] && set[name+fileFlagSuffix] {
			errs = append(errs, fmt.Errorf("%w: --%s and --%s%s", ErrConflict, name, name, fileFlagSuffix))
			continue
		}
		if set[name] || set[name+fileFlagSuffix] {
			continue
		}
		env := EnvName(name)
		v, hasValue := lookup(env)
		path, hasFile := lookup(env + FileSuffix)
		switch {
		case hasValue && hasFile:
			errs = append(errs, fmt.Errorf("%w: %s and %s%s", ErrConflict, env, env, FileSuffix))
			continue
		case hasFile:
			var err error
			if v, err = ReadFile(path); err != nil {
				errs = append(errs, fmt.Errorf("%s%s: %w", env, FileSuffix, err))
				continue
			}
		case !hasValue:
			continue
		}
		// Set on the value itself: pflag's FlagSet.Set quotes the value
		// in its error (a secret's is never printed), and marks the flag
		// Changed, which stays what the command line set.
		if err := f.Value.Set(v); err != nil {
			// The value's own message says little ("parse error"): a
			// secret's is left out, and the form the flag takes is said.
			switch want := Form(f); {
			case IsSecret(f):
				err = errors.New("invalid value")
			case want != "":
				err = fmt.Errorf("%q is not %s", v, want)
			}
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
		}
	}
	return errors.Join(errs...)
}

// Form says what a value of f looks like, for an error about a bad one:
// "a duration such as 5s or 1m30s"; "" for a string or a form of its own.
func Form(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "duration":
		return "a duration such as 5s or 1m30s"
	case "bool":
		return "true or false"
	case "int", "int64":
		return "a whole number such as 10"
	case "uint", "uint64":
		return "a whole number of at least 0"
	case "float64":
		return "a number such as 0.5"
	}
	return ""
}

// Alias defines old as the former name of the flag name, which fs must
// already define: setting --old sets --name and writes a warning to w,
// once; the environment is read under name's variable only (LNPDB_OLD may
// mean something else to another command). For a flag renamed because
// its name meant two things; the old name is kept for one release.
func Alias(fs *pflag.FlagSet, old, name string, w io.Writer) {
	f := fs.Lookup(name)
	fs.Var(&alias{Value: f.Value, old: old, name: name, w: w}, old, "former name of --"+name+", deprecated")
	fs.Lookup(old).NoOptDefVal = f.NoOptDefVal // a bool's --old alone, as --name
}

type alias struct {
	pflag.Value
	old, name string
	w         io.Writer
	warned    bool
}

func (a *alias) Set(v string) error {
	if !a.warned {
		a.warned = true
		fmt.Fprintf(a.w, "lnpdb: --%s is deprecated and will be removed: use --%s (%s)\n", a.old, a.name, EnvName(a.name))
	}
	return a.Value.Set(v)
}

// notSetting tells the LNPDB_ variables that set no flag of any command.
func notSetting(name string) bool {
	return name == Prefix+"KEY" || strings.HasPrefix(name, Prefix+"TEST_")
}

// notFlagSetting tells the flags of the command line itself (--help,
// --version), which no variable sets.
func notFlagSetting(f *pflag.Flag) bool {
	return f.Name == "help" || f.Name == "version"
}

func isAlias(f *pflag.Flag) bool {
	_, ok := f.Value.(*alias)
	return ok
}

// Unknown returns the LNPDB_* variables of environ (os.Environ's form)
// that no flag of fs reads: a misspelt one (LNPDB_ADRR) would otherwise be
// ignored without a word. Names only, sorted; never a value. The variables
// that are not settings of a command are not named: the tests' own
// (LNPDB_TEST_*) and the API key the README's curl commands read (LNPDB_KEY).
func Unknown(fs *pflag.FlagSet, environ []string) []string {
	known := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		if isFileForm(f) || isAlias(f) || notFlagSetting(f) {
			return
		}
		known[EnvName(f.Name)] = true
		if IsSecret(f) {
			known[EnvName(f.Name)+FileSuffix] = true
		}
	})
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, Prefix) && !known[name] && !notSetting(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
