package edge

import (
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// cronSchemaPattern is WorkerCronTrigger desiredSchema /properties/cron/pattern.
var cronSchemaPattern = regexp.MustCompile(`^(?:\*(?:/[0-9]{1,2})?|[0-9]{1,2}(?:-[0-9]{1,2}(?:/[0-9]{1,2})?)?)(?:,(?:\*(?:/[0-9]{1,2})?|[0-9]{1,2}(?:-[0-9]{1,2}(?:/[0-9]{1,2})?)?))*(?: (?:\*(?:/[0-9]{1,2})?|[0-9]{1,2}(?:-[0-9]{1,2}(?:/[0-9]{1,2})?)?)(?:,(?:\*(?:/[0-9]{1,2})?|[0-9]{1,2}(?:-[0-9]{1,2}(?:/[0-9]{1,2})?)?))*){4}$`)

func cronSeq(lo, hi, step int) []int {
	var out []int
	for v := lo; v <= hi; v += step {
		out = append(out, v)
	}
	return out
}

func TestParseCronValid(t *testing.T) {
	tests := []struct {
		expr                     string
		min, hour, dom, mon, dow []int
	}{
		{"*/5 * * * *", cronSeq(0, 59, 5), cronSeq(0, 23, 1), cronSeq(1, 31, 1), cronSeq(1, 12, 1), cronSeq(0, 6, 1)},
		{"0 0 1 1 *", []int{0}, []int{0}, []int{1}, []int{1}, cronSeq(0, 6, 1)},
		{"0-59/15 0-23 1-31 1-12 0-6", []int{0, 15, 30, 45}, cronSeq(0, 23, 1), cronSeq(1, 31, 1), cronSeq(1, 12, 1), cronSeq(0, 6, 1)},
		{"0 12 * * 1-5", []int{0}, []int{12}, cronSeq(1, 31, 1), cronSeq(1, 12, 1), []int{1, 2, 3, 4, 5}},
		{"0,30 8,12,18 1,15 */3 0,6", []int{0, 30}, []int{8, 12, 18}, []int{1, 15}, []int{1, 4, 7, 10}, []int{0, 6}},
		{"5-10,1-2,7 * * * *", []int{1, 2, 5, 6, 7, 8, 9, 10}, cronSeq(0, 23, 1), cronSeq(1, 31, 1), cronSeq(1, 12, 1), cronSeq(0, 6, 1)},
		{"*/60 */24 */31 */12 */7", []int{0}, []int{0}, []int{1}, []int{1}, []int{0}},
		{"10-20/5 3-3 31 12 6", []int{10, 15, 20}, []int{3}, []int{31}, []int{12}, []int{6}},
		{"59 23 31 12 6", []int{59}, []int{23}, []int{31}, []int{12}, []int{6}},
		{"05 07 09 01 00", []int{5}, []int{7}, []int{9}, []int{1}, []int{0}}, // leading zero accepted, decimal
		{"1-59/58 * * * *", []int{1, 59}, cronSeq(0, 23, 1), cronSeq(1, 31, 1), cronSeq(1, 12, 1), cronSeq(0, 6, 1)},
	}
	for _, tc := range tests {
		s, err := ParseCron(tc.expr)
		if err != nil {
			t.Errorf("ParseCron(%q): %v", tc.expr, err)
			continue
		}
		got := [][]int{s.Minutes(), s.Hours(), s.DaysOfMonth(), s.Months(), s.DaysOfWeek()}
		want := [][]int{tc.min, tc.hour, tc.dom, tc.mon, tc.dow}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCron(%q) sets = %v, want %v", tc.expr, got, want)
		}
		if s.String() != tc.expr {
			t.Errorf("String() = %q", s.String())
		}
		if !cronSchemaPattern.MatchString(tc.expr) {
			t.Errorf("%q accepted but not schema-valid", tc.expr)
		}
	}
}

func TestParseCronInvalid(t *testing.T) {
	tests := []struct{ expr, rule string }{
		{"", RuleCronEmpty},
		{"* * * *", RuleCronFields},
		{"0 3 * *", RuleCronFields}, // reference negative fixture
		{"* * * * * *", RuleCronFields},
		{"MON", RuleCronFields},
		{"60 * * * *", RuleCronRange},
		{"* 24 * * *", RuleCronRange},
		{"* * 0 * *", RuleCronRange},
		{"* * 32 * *", RuleCronRange},
		{"* * * 0 *", RuleCronRange},
		{"* * * 13 *", RuleCronRange},
		{"* * * * 7", RuleCronRange},
		{"100 * * * *", RuleCronRange},
		{"0-60 * * * *", RuleCronRange},
		{"5-3 * * * *", RuleCronInvertedRange},
		{"* * * * 6-0", RuleCronInvertedRange},
		{"*/0 * * * *", RuleCronStep},
		{"*/61 * * * *", RuleCronStep},
		{"* */25 * * *", RuleCronStep},
		{"* * * * */8", RuleCronStep},
		{"0-9/11 * * * *", RuleCronStep},
		{"5-5/2 * * * *", RuleCronStep},
		{"*/100 * * * *", RuleCronStep},
		{"5/2 * * * *", RuleCronLiteralStep},
		{"* * * * 1/2", RuleCronLiteralStep},
		{"0 0 * * MON", RuleCronName},
		{"0 0 * JAN *", RuleCronName},
		{"0 0 * * mon-fri", RuleCronName},
		{"1,,2 * * * *", RuleCronSyntax},
		{"1,2, * * * *", RuleCronSyntax},
		{",1 * * * *", RuleCronSyntax},
		{"+5 * * * *", RuleCronSyntax},
		{"-5 * * * *", RuleCronSyntax},
		{"5- * * * *", RuleCronSyntax},
		{"1-2-3 * * * *", RuleCronSyntax},
		{"*-5 * * * *", RuleCronSyntax},
		{"** * * * *", RuleCronSyntax},
		{"*/ * * * *", RuleCronSyntax},
		{"*/5/2 * * * *", RuleCronSyntax},
		{"*/-1 * * * *", RuleCronSyntax},
		{"005 * * * *", RuleCronSyntax},
		{"*/005 * * * *", RuleCronSyntax},
		{"? * * * *", RuleCronSyntax},
		{"５ * * * *", RuleCronSyntax},
		{"*  * * * *", RuleCronSeparator},
		{" * * * * *", RuleCronSeparator},
		{"* * * * * ", RuleCronSeparator},
		{"*\t* * * *", RuleCronSeparator},
		{"* * * * *\n", RuleCronSeparator},
		{"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24 * * * *", RuleCronLength},
	}
	for _, tc := range tests {
		s, err := ParseCron(tc.expr)
		if s != nil {
			t.Errorf("ParseCron(%q) returned a schedule with error %v", tc.expr, err)
		}
		t.Run(tc.expr, func(t *testing.T) { wantRuleError(t, err, tc.rule, "/cron") })
	}
}

// Everything ParseCron accepts must be valid against the Definition's schema.
func TestParseCronAcceptsOnlySchemaValid(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	num := func() string {
		if r.Intn(10) == 0 {
			return pick("7", "12", "23", "24", "31", "59", "60", "100", "", "a", "+1", "-1", "007")
		}
		return pick("1", "2", "3", "4", "5", "6", "01", "05")
	}
	accepted := 0
	for i := 0; i < 50000; i++ {
		nFields := 5
		if r.Intn(8) == 0 {
			nFields = 4 + r.Intn(3)
		}
		var b strings.Builder
		if r.Intn(20) == 0 {
			b.WriteString(pick(" ", "\t"))
		}
		for f := 0; f < nFields; f++ {
			if f > 0 {
				if r.Intn(16) == 0 {
					b.WriteString(pick("  ", "\t", ""))
				} else {
					b.WriteString(" ")
				}
			}
			for it := 1 + r.Intn(3); it > 0; it-- {
				switch r.Intn(7) {
				case 0:
					b.WriteString("*")
				case 1:
					b.WriteString("*/" + num())
				case 2:
					b.WriteString(num())
				case 3:
					b.WriteString(num() + "-" + num())
				case 4:
					b.WriteString(num() + "-" + num() + "/" + num())
				case 5:
					if r.Intn(4) == 0 {
						b.WriteString(num() + "/" + num())
					} else {
						b.WriteString("*")
					}
				case 6:
					b.WriteString(num())
				}
				if it > 1 {
					b.WriteString(pick(",", ",", ",", ",,"))
				}
			}
		}
		expr := b.String()
		if _, err := ParseCron(expr); err == nil {
			accepted++
			if !cronSchemaPattern.MatchString(expr) || len(expr) > 64 {
				t.Fatalf("ParseCron accepted schema-invalid %q", expr)
			}
		}
	}
	if accepted < 500 {
		t.Fatalf("generator produced only %d accepted expressions", accepted)
	}
}

func cronUTC(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustCron(t *testing.T, expr string) *Schedule {
	t.Helper()
	s, err := ParseCron(expr)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", expr, err)
	}
	return s
}

func TestScheduleMatches(t *testing.T) {
	tests := []struct {
		expr, at string
		want     bool
	}{
		{"*/5 * * * *", "2026-03-04 10:15", true},
		{"*/5 * * * *", "2026-03-04 10:16", false},
		{"0 12 * * 1-5", "2026-03-06 12:00", true},  // Friday
		{"0 12 * * 1-5", "2026-03-07 12:00", false}, // Saturday
		// DOM and DOW both restricted: OR.
		{"0 0 13 * 5", "2026-03-13 00:00", true}, // Friday 13th
		{"0 0 13 * 5", "2026-03-20 00:00", true}, // Friday, not 13th
		{"0 0 13 * 5", "2026-04-13 00:00", true}, // Monday 13th
		{"0 0 13 * 5", "2026-04-14 00:00", false},
		// Only one restricted: it alone decides.
		{"0 0 13 * *", "2026-03-20 00:00", false},
		{"0 0 * * 5", "2026-03-13 00:00", true},
		{"0 0 * * 5", "2026-04-13 00:00", false},
		// Restriction is by set: */2 restricts, 1-31 and 0-6 do not.
		{"0 0 */2 * 1", "2026-03-03 00:00", true},  // Tuesday 3rd (odd day)
		{"0 0 */2 * 1", "2026-03-02 00:00", true},  // Monday 2nd
		{"0 0 */2 * 1", "2026-03-04 00:00", false}, // Wednesday 4th
		{"0 0 1-31 * 1", "2026-03-03 00:00", false},
		{"0 0 1 * 0-6", "2026-03-02 00:00", false},
		{"0 0 1 1 *", "2027-01-01 00:00", true},
		{"0 0 1 1 *", "2027-02-01 00:00", false},
	}
	for _, tc := range tests {
		s := mustCron(t, tc.expr)
		if got := s.Matches(cronUTC(tc.at)); got != tc.want {
			t.Errorf("%q.Matches(%s) = %v, want %v", tc.expr, tc.at, got, tc.want)
		}
	}
	// UTC only: the instant decides, not the location's wall clock.
	s := mustCron(t, "0 12 * * *")
	tokyo := time.FixedZone("JST", 9*3600)
	if !s.Matches(time.Date(2026, 3, 4, 21, 0, 30, 0, tokyo)) {
		t.Error("12:00 UTC written in JST did not match")
	}
	if s.Matches(time.Date(2026, 3, 4, 12, 0, 0, 0, tokyo)) {
		t.Error("12:00 JST matched a 12:00 UTC schedule")
	}
	if s.DayOfMonthRestricted() || s.DayOfWeekRestricted() {
		t.Error("restriction flags wrong for 0 12 * * *")
	}
}

func TestScheduleNext(t *testing.T) {
	tests := []struct{ expr, after, want string }{
		{"*/5 * * * *", "2026-03-04 10:15", "2026-03-04 10:20"}, // strictly after
		{"*/5 * * * *", "2026-03-04 10:17", "2026-03-04 10:20"},
		{"*/5 * * * *", "2026-03-04 23:58", "2026-03-05 00:00"},
		{"0 0 1 1 *", "2026-03-04 10:15", "2027-01-01 00:00"},
		{"0 12 * * 1-5", "2026-03-06 12:00", "2026-03-09 12:00"}, // Fri → Mon
		{"30 9 * * *", "2026-03-04 09:29", "2026-03-04 09:30"},
		{"30 9 * * *", "2026-03-04 09:30", "2026-03-05 09:30"},
		{"0 0 13 * 5", "2026-03-13 00:00", "2026-03-20 00:00"}, // OR: next Friday
		{"0 0 13 * 5", "2026-03-27 00:00", "2026-04-03 00:00"},
		{"0 0 13 * 5", "2026-04-10 00:00", "2026-04-13 00:00"}, // OR: Monday 13th
		{"0 0 29 2 *", "2026-03-01 00:00", "2028-02-29 00:00"},
		{"0 0 29 2 *", "2096-03-01 00:00", "2104-02-29 00:00"}, // 2100 is not leap
		{"15,45 6-7 * * *", "2026-03-04 06:45", "2026-03-04 07:15"},
		{"0 0 31 * *", "2026-04-01 00:00", "2026-05-31 00:00"},
		{"59 23 31 12 *", "2026-12-31 23:59", "2027-12-31 23:59"},
	}
	for _, tc := range tests {
		s := mustCron(t, tc.expr)
		got := s.Next(cronUTC(tc.after))
		if want := cronUTC(tc.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%q.Next(%s) = %v, want %v", tc.expr, tc.after, got, want)
		}
		if !s.Matches(got) {
			t.Errorf("%q.Next(%s) = %v does not match", tc.expr, tc.after, got)
		}
	}

	// Seconds and non-UTC zones: result is the next UTC minute, zero seconds.
	s := mustCron(t, "* * * * *")
	in := time.Date(2026, 3, 4, 19, 15, 59, 999, time.FixedZone("JST", 9*3600))
	if got, want := s.Next(in), time.Date(2026, 3, 4, 10, 16, 0, 0, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("Next(%v) = %v, want %v", in, got, want)
	}

	// A schedule that never matches yields the zero time.
	if got := mustCron(t, "0 0 30 2 *").Next(cronUTC("2026-01-01 00:00")); !got.IsZero() {
		t.Errorf("Next of February 30 = %v, want zero time", got)
	}
}

// Next agrees with a brute-force minute scan.
func TestScheduleNextAgreesWithScan(t *testing.T) {
	exprs := []string{"*/7 */5 * * *", "0 0 13 * 5", "0 0 */2 * 1", "3 4 1-7 * 0", "*/30 1 29-31 2,3 *", "59 23 * * 6"}
	start := cronUTC("2026-01-01 00:00")
	for _, expr := range exprs {
		s := mustCron(t, expr)
		at := start
		for i := 0; i < 40; i++ {
			got := s.Next(at)
			want := at.Truncate(time.Minute).Add(time.Minute)
			for !s.Matches(want) {
				want = want.Add(time.Minute)
			}
			if !got.Equal(want) {
				t.Fatalf("%q.Next(%v) = %v, scan says %v", expr, at, got, want)
			}
			at = got.Add(17 * time.Second)
		}
	}
}
