package operator

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/store"
)

// at is the time every filled time is set to.
var at = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fill sets every field v has to a value that is not zero: numbers 1,
// bools true, strings "k", times at, maps {"k": ...}, lists and pointers
// one filled element.
func fill(v reflect.Value) {
	if !v.CanSet() {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(at))
		return
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("k")
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Slice:
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e)
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), e))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	}
}

// filled returns a T with every field filled.
func filled[T any]() T {
	var x T
	fill(reflect.ValueOf(&x).Elem())
	return x
}

// noZero reports every field of v, but those skip names, left zero: a
// field of the API's that the conversion does not feed.
func noZero(t *testing.T, path string, v reflect.Value, skip ...string) {
	t.Helper()
	switch {
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]():
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && !slices.Contains(skip, f.Name) {
				noZero(t, path+"."+f.Name, v.Field(i), skip...)
			}
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		noZero(t, path, v.Elem(), skip...)
	case v.IsZero():
		t.Errorf("%s is zero: the conversion does not set it", path)
	}
}

// TestConversionsFeedEveryField: what the API shows of a crawl, its stats,
// metrics, URL records and pages, has each field set from the crawl's, so
// that none is left out of the JSON.
func TestConversionsFeedEveryField(t *testing.T) {
	live := filled[crawl.Live]()
	live.Frontier.Wait.At = at.Add(time.Minute) // a wait still to come
	// Cluster is the server's to fill.
	noZero(t, "Stats", reflect.ValueOf(statsOf(live, at)), "Cluster")
	noZero(t, "Metrics", reflect.ValueOf(metricsOf(filled[crawl.Metrics]())))
	noZero(t, "URLRecord", reflect.ValueOf(urlRecordOf(filled[store.URLPos](), filled[store.URLRecord]())))
	noZero(t, "Page", reflect.ValueOf(pageOf(filled[crawl.Page]())))
}
