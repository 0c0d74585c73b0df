package packet

import (
	"reflect"
	"testing"
)

// fillProps sets every field of p to a non-zero value, the string, bytes
// and slice fields only when withPointers.
func fillProps(t *testing.T, p *Properties, withPointers bool) {
	t.Helper()
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(1)
		case reflect.String:
			if withPointers {
				f.SetString("x")
			}
		case reflect.Slice:
			if withPointers {
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			}
		default:
			t.Fatalf("field %s of kind %s: teach fillProps and Properties.reset about it", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestPropertiesReset checks that reset zeroes every field, with and without
// pointer fields set: a scalar field added to Properties but not to reset's
// list fails the scalar case.
func TestPropertiesReset(t *testing.T) {
	for _, withPointers := range []bool{false, true} {
		var p Properties
		fillProps(t, &p, withPointers)
		p.reset()
		if !reflect.DeepEqual(p, Properties{}) {
			t.Fatalf("withPointers %v: reset left %+v", withPointers, p)
		}
	}
	for _, empty := range []Properties{{ContentType: "x"[:0]}, {User: []UserProperty{}}} {
		p := empty
		p.reset()
		if !reflect.DeepEqual(p, Properties{}) {
			t.Fatalf("reset of %#v left %#v", empty, p)
		}
	}
}

// TestDecoderReusedValueReset checks that a PUBLISH and a PUBACK decoded
// into values holding an earlier packet's fields carry nothing over.
func TestDecoderReusedValueReset(t *testing.T) {
	var pub Publish
	fillProps(t, &pub.Props, true)
	pub.Dup, pub.PacketID, pub.Topic, pub.Payload = true, 9, []byte("old"), []byte("old")
	body := []byte{0, 3, 'a', '/', 'b', 0} // topic a/b, no properties, empty payload
	if err := decodePublish(V5, 0, body, &pub); err != nil {
		t.Fatal(err)
	}
	if want := (Publish{Topic: []byte("a/b"), Payload: []byte{}}); !reflect.DeepEqual(pub, want) {
		t.Fatalf("decoded into a used value: %+v, want %+v", pub, want)
	}
	var ack Puback
	fillProps(t, &ack.Props, false)
	ack.Reason = 0x80
	if err := decodeAckInto(V5, PUBACK, []byte{0, 7}, &ack); err != nil {
		t.Fatal(err)
	}
	if want := (Puback{PacketID: 7}); !reflect.DeepEqual(ack, want) {
		t.Fatalf("decoded into a used ack: %+v, want %+v", ack, want)
	}
}
