package sessionstore

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Timestamp converts a time to a protobuf Timestamp, nanoseconds included.
// The zero time becomes nil, which the server reads as "unset" (it then
// assigns the time itself).
func Timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// Time converts a Timestamp to a UTC time; nil becomes the zero time.
func Time(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

// TimestampFromSeconds converts float seconds since the epoch (Python ADK's
// Event.timestamp) to the nearest nanosecond. Seconds of the result gives the
// same float back whenever the float is coarser than 2 ns, that is for every
// time from mid-1970 to the year 9999, which is what lets a Python float
// survive a trip through Go and the server unchanged.
//
// The whole seconds are split off before scaling: multiplying the float by
// 1e9 directly would round to a multiple of 256 ns at today's epoch values.
func TimestampFromSeconds(seconds float64) (*timestamppb.Timestamp, error) {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		return nil, fmt.Errorf("sessionstore: timestamp %v is not a number of seconds", seconds)
	}
	whole := math.Floor(seconds)
	nanos := math.Round((seconds - whole) * 1e9)
	if nanos >= 1e9 {
		whole++
		nanos -= 1e9
	}
	ts := &timestamppb.Timestamp{Seconds: int64(whole), Nanos: int32(nanos)}
	if err := ts.CheckValid(); err != nil {
		return nil, fmt.Errorf("sessionstore: timestamp %v: %w", seconds, err)
	}
	return ts, nil
}

// Seconds converts a Timestamp to float seconds since the epoch, the inverse
// of TimestampFromSeconds; nil becomes 0.
func Seconds(ts *timestamppb.Timestamp) float64 {
	if ts == nil {
		return 0
	}
	return float64(ts.GetSeconds()) + float64(ts.GetNanos())/1e9
}

// Struct converts a JSON-like Go map to a Struct by way of encoding/json, so
// values of any marshalable type are accepted (structs, typed slices, ints),
// and come back the way JSON does: numbers as float64, objects as
// map[string]any. nil stays nil, so "absent" and "empty" remain different.
func Struct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	return StructFrom(m)
}

// StructFrom converts any value that marshals to a JSON object to a Struct.
func StructFrom(v any) (*structpb.Struct, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sessionstore: to Struct: %w", err)
	}
	s := &structpb.Struct{}
	if err := protojson.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("sessionstore: to Struct: %w", err)
	}
	return s, nil
}

// Map converts a Struct to a Go map; nil stays nil.
func Map(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

// StructInto decodes a Struct into v with encoding/json rules (field tags,
// custom UnmarshalJSON), the inverse of StructFrom. A nil Struct leaves v
// untouched.
func StructInto(s *structpb.Struct, v any) error {
	if s == nil {
		return nil
	}
	b, err := protojson.Marshal(s)
	if err != nil {
		return fmt.Errorf("sessionstore: from Struct: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("sessionstore: from Struct: %w", err)
	}
	return nil
}
