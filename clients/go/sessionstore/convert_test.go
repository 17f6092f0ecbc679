package sessionstore

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestTimestampFromSecondsRoundTripsPythonFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []float64{1 << 24, 1733040000.123456, 1.7e9 + 0.999999999, 253402300799.999, -1e9 - 0.25}
	for range 200_000 {
		// Uniform over 1970-07 .. 9999 by magnitude, both signs of fraction.
		sec := math.Exp(r.Float64()*(math.Log(2.5e11)-math.Log(1<<24))) * (1 << 24)
		cases = append(cases, sec, math.Nextafter(sec, math.Inf(1)))
	}
	for _, f := range cases {
		ts, err := TimestampFromSeconds(f)
		if err != nil {
			t.Fatalf("TimestampFromSeconds(%v): %v", f, err)
		}
		if ts.GetNanos() < 0 || ts.GetNanos() >= 1e9 {
			t.Fatalf("TimestampFromSeconds(%v) = %v: nanos out of range", f, ts)
		}
		if got := Seconds(ts); got != f {
			t.Fatalf("Seconds(TimestampFromSeconds(%v)) = %v (ts %v)", f, got, ts)
		}
	}
}

func TestTimestampFromSecondsIsNearestNanosecond(t *testing.T) {
	ts, err := TimestampFromSeconds(1733040000.5)
	if err != nil {
		t.Fatal(err)
	}
	if ts.GetSeconds() != 1733040000 || ts.GetNanos() != 500_000_000 {
		t.Fatalf("got %v", ts)
	}
	// The float nearest 1733040000.1 is 1733040000.0999999046...: its
	// nearest nanosecond is kept, not the decimal the float was written as.
	ts, _ = TimestampFromSeconds(1733040000.1)
	if ts.GetNanos() != 99_999_905 {
		t.Fatalf("got nanos %d, want 99999905", ts.GetNanos())
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), 1e300} {
		if _, err := TimestampFromSeconds(bad); err == nil {
			t.Errorf("TimestampFromSeconds(%v): want error", bad)
		}
	}
}

func TestTimeConversions(t *testing.T) {
	if Timestamp(time.Time{}) != nil {
		t.Error("zero time should be an unset Timestamp")
	}
	if !Time(nil).IsZero() {
		t.Error("nil Timestamp should be the zero time")
	}
	in := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	out := Time(Timestamp(in))
	if !out.Equal(in) || out.Location() != time.UTC {
		t.Errorf("round trip: got %v, want %v in UTC", out, in)
	}
	if got := Seconds(&timestamppb.Timestamp{Seconds: 10, Nanos: 5e8}); got != 10.5 {
		t.Errorf("Seconds = %v", got)
	}
}

func TestStructKeepsAbsentAndEmptyApart(t *testing.T) {
	s, err := Struct(nil)
	if err != nil || s != nil {
		t.Fatalf("Struct(nil) = %v, %v; want nil", s, err)
	}
	s, err = Struct(map[string]any{})
	if err != nil || s == nil || len(s.GetFields()) != 0 {
		t.Fatalf("Struct({}) = %v, %v; want empty", s, err)
	}
	type point struct{ X, Y int }
	s, err = Struct(map[string]any{"p": point{1, 2}, "tags": []string{"a"}, "n": nil, "ok": true})
	if err != nil {
		t.Fatal(err)
	}
	m := Map(s)
	if m["p"].(map[string]any)["X"] != float64(1) || m["tags"].([]any)[0] != "a" || m["n"] != nil || m["ok"] != true {
		t.Fatalf("Map = %#v", m)
	}
	if _, err := Struct(map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN: want error, JSON has no NaN")
	}
	var back struct {
		P    point    `json:"p"`
		Tags []string `json:"tags"`
	}
	if err := StructInto(s, &back); err != nil || back.P.Y != 2 || back.Tags[0] != "a" {
		t.Fatalf("StructInto = %+v, %v", back, err)
	}
}
