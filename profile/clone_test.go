package profile

import (
	"reflect"
	"testing"
)

// TestCloneDeep fills every field of a Profile, clones it, and checks that
// the copy is equal and shares no memory with it: every slice and pointer
// of the copy is changed and the original must not see it. A field added
// to Profile or to the types it holds that Clone does not copy fails here.
func TestCloneDeep(t *testing.T) {
	p := &Profile{}
	fill(reflect.ValueOf(p).Elem(), 1)
	c := p.Clone()
	if !reflect.DeepEqual(p, c) {
		t.Fatalf("Clone differs from the original:\n%+v\n%+v", c, p)
	}
	keep := &Profile{}
	fill(reflect.ValueOf(keep).Elem(), 1)
	fill(reflect.ValueOf(c).Elem(), 2) // writes through every slice and pointer of c
	if !reflect.DeepEqual(p, keep) {
		t.Errorf("changing the clone changed the original:\n%+v\nwant\n%+v", p, keep)
	}
	if (*Profile)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}

// fill sets every field reachable from v to a value derived from n, writing
// through existing slices and pointers (allocating them when nil). It fails
// on kinds Clone is not known to copy.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n)
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := range v.Len() {
			fill(v.Index(i), n+i)
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n)
	case reflect.String:
		v.SetString(string(rune('a' + n)))
	case reflect.Bool:
		v.SetBool(n%2 == 1)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint64, reflect.Uint:
		v.SetUint(uint64(n))
	default:
		panic("fill: Clone does not know how to copy a " + v.Type().String())
	}
}
