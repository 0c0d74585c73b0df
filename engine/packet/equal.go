package packet

import "reflect"

// Equal reports whether a and b are the same packet value, treating nil and
// empty slices alike (a decoder returns empty slices where a caller may have
// written nil). It is the equality under which Append and Decode round-trip.
func Equal(a, b Packet) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(normalize(reflect.ValueOf(a)).Interface(), normalize(reflect.ValueOf(b)).Interface())
}

// normalize returns a deep copy of v with every empty slice replaced by nil.
func normalize(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(normalize(v.Elem()))
		return p
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		for i := 0; i < v.NumField(); i++ {
			s.Field(i).Set(normalize(v.Field(i)))
		}
		return s
	case reflect.Slice:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			s.Index(i).Set(normalize(v.Index(i)))
		}
		return s
	}
	return v
}
