package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft"
)

// flagsWithoutField are the flags of weft crawl and weft serve that set no
// field of weft.Config, each with why a program has no need of it.
var flagsWithoutField = map[string]string{
	"config":       "a file of these flags' values; a program sets the fields",
	"progress":     "the progress line on the command's terminal",
	"summary":      "the summary as a JSON file; Run returns the Summary, which marshals as JSON",
	"memory-limit": "the process's memory budget, which a program sets for itself (debug.SetMemoryLimit)",

	"http": "the operator API the command serves", "http-token": "the operator API's token",
	"http-token-file": "the operator API's token",

	"cluster": "a node of a crawl spread over several machines", "node": "a cluster node's name",
	"lease-ttl": "a cluster's leases", "advertise": "a cluster node's API address",
	"snapshot-every": "a cluster's snapshots", "snapshot-after": "a cluster's snapshots",
	"cluster-replicas": "a cluster's streams",

	"events":      "page events for other processes; a program's Consumer is given every page",
	"events-nats": "page events for other processes", "events-stream": "page events for other processes",
	"events-subject": "page events for other processes", "webhook": "page events for other processes",
	"webhook-header": "page events for other processes", "webhook-give-up": "page events for other processes",

	"recrawl-min":   "weft serve's crawl that never ends; a program's Run ends when nothing is left",
	"recrawl-max":   "weft serve's crawl that never ends",
	"recrawl-scan":  "weft serve's crawl that never ends",
	"recrawl-prior": "weft serve's crawl that never ends",
	"recrawl-floor": "weft serve's crawl that never ends",
	"inlink-memory": "weft serve's crawl that never ends",
	"inlink-mib":    "weft serve's crawl that never ends (deprecated: --inlink-memory)",
}

// fieldsWithoutFlag are the fields of weft.Config no flag sets, and why.
var fieldsWithoutFlag = map[string]string{
	"Scope":       "a program's own code",
	"Filters":     "a program's own code",
	"Consumers":   "a program's own code",
	"Requisites":  "deprecated; --requisites=false sets NoRequisites",
	"SeedOptions": "the fields after a seed's URL in --seeds FILE, an argument or a profile's urls",
	"S3AccessKey": "read from $WEFT_S3_ACCESS_KEY, not a flag other users of the machine could read",
	"S3SecretKey": "read from $WEFT_S3_SECRET_KEY, not a flag other users of the machine could read",
}

// crawlAndServeFlags are the flags of weft crawl and weft serve, serve's
// being crawl's and its own.
func crawlAndServeFlags() map[string]*pflag.Flag {
	flags := map[string]*pflag.Flag{}
	for _, cmd := range []func() *cobra.Command{newCrawlCmd, newServeCmd} {
		cmd().Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = f })
	}
	return flags
}

// Every flag of weft crawl and weft serve sets a field of weft.Config
// (flagFields) or says why a program needs none (flagsWithoutField); every
// field of weft.Config is set by a flag or says why not; the tables name
// only flags and fields there are.
func TestEveryFlagHasAField(t *testing.T) {
	flags := crawlAndServeFlags()
	config := reflect.TypeFor[weft.Config]()
	for name := range flags {
		field, api := flagFields[name]
		why, command := flagsWithoutField[name]
		switch {
		case !api && !command:
			t.Errorf("--%s has no counterpart in weft.Config: give it a field (and flagFields its name), or say in flagsWithoutField why a program needs none", name)
		case api && command:
			t.Errorf("--%s is in flagFields (%s) and in flagsWithoutField (%s)", name, field, why)
		}
	}
	for _, table := range []map[string]string{flagFields, flagsWithoutField} {
		for name := range table {
			if flags[name] == nil {
				t.Errorf("--%s is not a flag of weft crawl or weft serve", name)
			}
		}
	}
	set := map[string]bool{}
	for name, field := range flagFields {
		if _, ok := config.FieldByName(field); !ok {
			t.Errorf("--%s sets weft.Config.%s, which is no field", name, field)
		}
		set[field] = true
	}
	for f := range config.Fields() {
		_, without := fieldsWithoutFlag[f.Name]
		switch {
		case !set[f.Name] && !without:
			t.Errorf("weft.Config.%s is set by no flag: give it one (in flagFields), or say in fieldsWithoutFlag why it has none", f.Name)
		case set[f.Name] && without:
			t.Errorf("weft.Config.%s is set by a flag, and in fieldsWithoutFlag", f.Name)
		}
	}
	for field := range fieldsWithoutFlag {
		if _, ok := config.FieldByName(field); !ok {
			t.Errorf("fieldsWithoutFlag names %s, which is no field of weft.Config", field)
		}
	}
}

// Each flag of flagFields sets its field: given a value other than its
// default, the weft.Config the command builds differs there.
func TestEachFlagSetsItsField(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("http://b.test/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A value of each flag other than its default, where its type's
	// (below) will not do.
	values := map[string]string{
		"seeds": seeds, "scope": "host", "ip-group": "subnet", "render": "always", "log-level": "debug",
		"resolve": "a.test=127.0.0.9", "allow-cidr": "10.0.0.0/8", "deny-cidr": "10.1.0.0/16",
		"accept-mime": "text/html", "reject-mime": "image/*", "max-body-for": "text/html=1MB", "reject-ext": "",
		"handler": "text/html=true", "dns-max-ttl": "2h", "insecure-tls": "a.test", "header": "X-Token: t",
		"sitemap": "http://b.test/sitemap.xml",
	}
	byType := map[string]string{"int": "7", "int64": "7", "uint": "7", "float64": "7", "duration": "7s", "size": "7MiB",
		"string": "x", "stringArray": "x", "stringSlice": "x"}
	settingsOf := func(args ...string) (weft.Config, error) {
		var f crawlFlags
		fs := pflag.NewFlagSet("crawl", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(args); err != nil {
			return weft.Config{}, err
		}
		return f.settings([]string{"http://a.test/"}, &bytes.Buffer{})
	}
	flags := crawlAndServeFlags()
	for _, name := range slices.Sorted(maps.Keys(flagFields)) {
		field, fl := flagFields[name], flags[name]
		if fl == nil {
			continue // TestEveryFlagHasAField names it
		}
		v, ok := values[name]
		switch {
		case ok:
		case fl.Value.Type() == "bool":
			v = fmt.Sprint(fl.DefValue != "true")
		default:
			if v, ok = byType[fl.Value.Type()]; !ok {
				t.Errorf("--%s: no value to try for its type %s", name, fl.Value.Type())
				continue
			}
		}
		var base []string
		if strings.HasPrefix(name, "handler-") {
			base = []string{"--handler", values["handler"]} // they shape its programs
		}
		def, err := settingsOf(base...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := settingsOf(append(base, "--"+name+"="+v)...)
		if err != nil {
			t.Errorf("--%s=%s: %v", name, v, err)
			continue
		}
		was, is := reflect.ValueOf(def).FieldByName(field).Interface(), reflect.ValueOf(got).FieldByName(field).Interface()
		if reflect.DeepEqual(was, is) {
			t.Errorf("--%s=%s leaves weft.Config.%s at %v", name, v, field, was)
		}
	}
}
