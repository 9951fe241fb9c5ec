// Package testfill fills a value's every field, for tests that check each
// field is carried through (added, converted, encoded): a field left out
// then shows up as a zero.
package testfill

import (
	"reflect"
	"time"
)

// At is the time every time.Time is set to.
var At = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// Fill sets every field *p has that can be set to a value that is not
// zero: numbers 1, bools true, strings "k", times At, arrays every
// element, maps one filled key to a filled value, lists one filled
// element, pointers a filled value. Unexported fields are left alone.
func Fill[T any](p *T) { fill(reflect.ValueOf(p).Elem()) }

func fill(v reflect.Value) {
	if !v.CanSet() {
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(At))
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
