package edge

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// Cron rule IDs (spec/host-api-v1alpha3.md §6.5). Every cron refusal points at "/cron".
const (
	RuleCronEmpty         = "edge.cron.empty"
	RuleCronLength        = "edge.cron.length"
	RuleCronSeparator     = "edge.cron.separator"
	RuleCronFields        = "edge.cron.fields"
	RuleCronSyntax        = "edge.cron.syntax"
	RuleCronName          = "edge.cron.name"
	RuleCronLiteralStep   = "edge.cron.literal-step"
	RuleCronRange         = "edge.cron.range"
	RuleCronInvertedRange = "edge.cron.inverted-range"
	RuleCronStep          = "edge.cron.step"
)

// CronMaxLength is the maxLength of WorkerCronTrigger's desired "cron".
const CronMaxLength = 64

const cronPointer = "/cron"

type cronFieldDef struct {
	name   string
	lo, hi int
}

var cronFieldDefs = [5]cronFieldDef{
	{"minute", 0, 59},
	{"hour", 0, 23},
	{"day-of-month", 1, 31},
	{"month", 1, 12},
	{"day-of-week", 0, 6},
}

// Schedule is a parsed five-field UTC cron expression (spec/host-api-v1alpha3.md §6.5). Each field is
// held as the expanded set of values it selects. The zero value is not
// useful; obtain one from ParseCron.
type Schedule struct {
	expr string
	sets [5]uint64 // bit v set = value v selected; index as cronFieldDefs
}

// ParseCron parses a portable five-field cron expression as WorkerCronTrigger
// "cron" (spec/host-api-v1alpha3.md §6.5) and returns its expanded schedule, or a *RuleError (pointer
// "/cron") naming the field and item at fault.
//
// Grammar (every accepted expression also matches the Definition's schema
// pattern and maxLength 64):
//   - exactly 5 fields separated by exactly one ASCII space; no leading,
//     trailing or repeated spaces, no tabs or other whitespace;
//   - fields: minute 0-59, hour 0-23, day-of-month 1-31, month 1-12,
//     day-of-week 0-6 (0 = Sunday; 7 is refused);
//   - each field is a comma list of non-empty items, each one of `*`, `N`,
//     `LO-HI`, `*/STEP`, `LO-HI/STEP`;
//   - numbers are 1 or 2 ASCII decimal digits; a leading zero is accepted and
//     means nothing (`05` = 5, decimal, never octal) because the schema
//     pattern admits it; 3+ digits, signs and names (JAN, MON) are refused;
//   - LO <= HI; STEP in 1..(HI-LO+1), where `*` spans the whole field;
//   - a step on a bare literal (`5/2`) is refused.
//
// Rules: edge.cron.empty, edge.cron.length, edge.cron.separator,
// edge.cron.fields, edge.cron.syntax, edge.cron.name, edge.cron.literal-step,
// edge.cron.range, edge.cron.inverted-range, edge.cron.step.
func ParseCron(expr string) (*Schedule, error) {
	if expr == "" {
		return nil, newRuleError(RuleCronEmpty, cronPointer,
			`cron is empty; write five fields such as "*/5 * * * *" (minute hour day-of-month month day-of-week, UTC)`)
	}
	if len(expr) > CronMaxLength {
		return nil, newRuleError(RuleCronLength, cronPointer, fmt.Sprintf(
			"cron is %d bytes, longer than the %d allowed; use ranges or steps instead of long lists", len(expr), CronMaxLength))
	}
	for i := 0; i < len(expr); i++ {
		if c := expr[i]; c != ' ' && cronIsSpace(c) {
			return nil, newRuleError(RuleCronSeparator, cronPointer, fmt.Sprintf(
				"cron contains whitespace %q at byte %d; separate the five fields with single ASCII spaces only", c, i))
		}
	}
	parts := strings.Split(expr, " ")
	for _, p := range parts {
		if p == "" {
			return nil, newRuleError(RuleCronSeparator, cronPointer, fmt.Sprintf(
				"cron %q has a leading, trailing or repeated space; separate the five fields with exactly one ASCII space", expr))
		}
	}
	if len(parts) != len(cronFieldDefs) {
		return nil, newRuleError(RuleCronFields, cronPointer, fmt.Sprintf(
			"cron %q has %d fields; write exactly 5: minute hour day-of-month month day-of-week", expr, len(parts)))
	}
	s := &Schedule{expr: expr}
	for i, f := range cronFieldDefs {
		set, err := parseCronField(f, parts[i])
		if err != nil {
			return nil, err
		}
		s.sets[i] = set
	}
	return s, nil
}

func cronIsSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func parseCronField(f cronFieldDef, text string) (uint64, error) {
	var set uint64
	items := strings.Split(text, ",")
	for n, item := range items {
		if item == "" {
			return 0, newRuleError(RuleCronSyntax, cronPointer, fmt.Sprintf(
				"%s field %q has an empty list item (leading, trailing or double comma); remove the extra comma", f.name, text))
		}
		bitsOf, err := parseCronItem(f, item, n+1)
		if err != nil {
			return 0, err
		}
		set |= bitsOf
	}
	return set, nil
}

func parseCronItem(f cronFieldDef, item string, pos int) (uint64, error) {
	where := fmt.Sprintf("%s field item %d %q", f.name, pos, item)
	for i := 0; i < len(item); i++ {
		c := item[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			return 0, newRuleError(RuleCronName, cronPointer, fmt.Sprintf(
				"%s: names are not accepted; write %s as numbers %d-%d%s", where, f.name, f.lo, f.hi, cronNameHint(f)))
		}
		if !(c >= '0' && c <= '9' || c == '*' || c == '-' || c == '/') {
			return 0, newRuleError(RuleCronSyntax, cronPointer, fmt.Sprintf(
				"%s: character %q is not allowed; an item is *, N, LO-HI, */STEP or LO-HI/STEP with unsigned decimal numbers", where, c))
		}
	}
	rangePart, stepPart, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, ok := cronDigits(stepPart)
		if !ok {
			if v, allDigits := cronAllDigits(stepPart); !allDigits || v < 100 {
				return 0, newRuleError(RuleCronSyntax, cronPointer, fmt.Sprintf(
					"%s: step %q is not a 1- or 2-digit unsigned decimal number (no sign, no extra leading zeros)", where, stepPart))
			}
			n = 100 // beyond every span: refused below as edge.cron.step
		}
		step = n
	}
	var lo, hi int
	switch {
	case rangePart == "*":
		lo, hi = f.lo, f.hi
	default:
		loText, hiText, isRange := strings.Cut(rangePart, "-")
		var err error
		if lo, err = cronNumber(f, where, loText); err != nil {
			return 0, err
		}
		hi = lo
		if isRange {
			if hi, err = cronNumber(f, where, hiText); err != nil {
				return 0, err
			}
			if lo > hi {
				return 0, newRuleError(RuleCronInvertedRange, cronPointer, fmt.Sprintf(
					"%s: range %d-%d is inverted; write the low bound first (%d-%d), ranges do not wrap around", where, lo, hi, hi, lo))
			}
		} else if hasStep {
			return 0, newRuleError(RuleCronLiteralStep, cronPointer, fmt.Sprintf(
				"%s: a step needs a range; write */%s or %s-%d/%s instead of a step on the bare literal %d",
				where, stepPart, loText, f.hi, stepPart, lo))
		}
	}
	if hasStep {
		if span := hi - lo + 1; step < 1 || step > span {
			return 0, newRuleError(RuleCronStep, cronPointer, fmt.Sprintf(
				"%s: step %s is outside 1..%d (the span of %d-%d); choose a step from 1 to %d", where, stepPart, span, lo, hi, span))
		}
	}
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << uint(v)
	}
	return set, nil
}

// cronNumber parses a field value: 1-2 decimal digits within the field.
func cronNumber(f cronFieldDef, where, text string) (int, error) {
	n, ok := cronDigits(text)
	if !ok {
		if v, allDigits := cronAllDigits(text); allDigits && v > f.hi {
			return 0, newRuleError(RuleCronRange, cronPointer, fmt.Sprintf(
				"%s: value %s is outside %s range %d-%d", where, text, f.name, f.lo, f.hi))
		}
		return 0, newRuleError(RuleCronSyntax, cronPointer, fmt.Sprintf(
			"%s: %q is not a valid number; use a 1- or 2-digit unsigned decimal number in %d-%d (no sign, no extra leading zeros)",
			where, text, f.lo, f.hi))
	}
	if n < f.lo || n > f.hi {
		hint := ""
		if f.name == "day-of-week" && n == 7 {
			hint = " (Sunday is 0, 7 is not accepted)"
		}
		return 0, newRuleError(RuleCronRange, cronPointer, fmt.Sprintf(
			"%s: value %d is outside %s range %d-%d%s", where, n, f.name, f.lo, f.hi, hint))
	}
	return n, nil
}

// cronDigits accepts exactly 1 or 2 ASCII digits.
func cronDigits(s string) (int, bool) {
	if len(s) < 1 || len(s) > 2 {
		return 0, false
	}
	return cronAllDigits(s)
}

func cronAllDigits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func cronNameHint(f cronFieldDef) string {
	switch f.name {
	case "month":
		return " (1 = January)"
	case "day-of-week":
		return " (0 = Sunday, 1 = Monday … 6 = Saturday)"
	}
	return ""
}

// String returns the expression exactly as parsed.
func (s *Schedule) String() string { return s.expr }

// Minutes returns the selected minutes (0-59), ascending.
func (s *Schedule) Minutes() []int { return cronSetValues(s.sets[0]) }

// Hours returns the selected hours (0-23, UTC), ascending.
func (s *Schedule) Hours() []int { return cronSetValues(s.sets[1]) }

// DaysOfMonth returns the selected days of month (1-31), ascending.
func (s *Schedule) DaysOfMonth() []int { return cronSetValues(s.sets[2]) }

// Months returns the selected months (1-12), ascending.
func (s *Schedule) Months() []int { return cronSetValues(s.sets[3]) }

// DaysOfWeek returns the selected days of week (0-6, 0 = Sunday), ascending.
func (s *Schedule) DaysOfWeek() []int { return cronSetValues(s.sets[4]) }

// DayOfMonthRestricted reports whether day-of-month selects fewer than all of
// 1-31. Restriction is decided on the expanded set, not on the spelling:
// `*`, `*/1` and `1-31` are unrestricted, `*/2` is restricted.
func (s *Schedule) DayOfMonthRestricted() bool { return s.sets[2] != cronFullSet(cronFieldDefs[2]) }

// DayOfWeekRestricted reports whether day-of-week selects fewer than all of
// 0-6 (see DayOfMonthRestricted for how restriction is decided).
func (s *Schedule) DayOfWeekRestricted() bool { return s.sets[4] != cronFullSet(cronFieldDefs[4]) }

// Matches reports whether the UTC minute containing t is a match (spec/host-api-v1alpha3.md §6.5).
// Seconds are ignored. When day-of-month and day-of-week are both restricted
// a day matches if either selects it; otherwise the restricted one (if any)
// alone decides.
func (s *Schedule) Matches(t time.Time) bool {
	t = t.UTC()
	return cronHas(s.sets[0], t.Minute()) && cronHas(s.sets[1], t.Hour()) && s.dayMatches(t)
}

func (s *Schedule) dayMatches(t time.Time) bool {
	if !cronHas(s.sets[3], int(t.Month())) {
		return false
	}
	dom := cronHas(s.sets[2], t.Day())
	dow := cronHas(s.sets[4], int(t.Weekday()))
	if s.DayOfMonthRestricted() && s.DayOfWeekRestricted() {
		return dom || dow
	}
	return dom && dow
}

// cronNextSearchDays bounds Next: every existing month/day pair (Feb 29 included)
// recurs within 8 Gregorian years.
const cronNextSearchDays = 9 * 366

// Next returns the first matching UTC minute strictly after `after`, with
// seconds and nanoseconds zero, in UTC. Missed runs are skipped: pass the
// current time, not the last run, and the result is never in the past of it.
// It returns the zero time.Time when the schedule never matches (e.g.
// "0 0 30 2 *", which selects only February 30).
func (s *Schedule) Next(after time.Time) time.Time {
	start := after.UTC().Truncate(time.Minute).Add(time.Minute)
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	for d := 0; d < cronNextSearchDays; d++ {
		if s.dayMatches(day) {
			fromHour, fromMinute := 0, 0
			if d == 0 {
				fromHour, fromMinute = start.Hour(), start.Minute()
			}
			for h := cronNextValue(s.sets[1], fromHour); h >= 0 && h <= 23; h = cronNextValue(s.sets[1], h+1) {
				m0 := 0
				if h == fromHour {
					m0 = fromMinute
				}
				if m := cronNextValue(s.sets[0], m0); m >= 0 && m <= 59 {
					return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
				}
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

func cronFullSet(f cronFieldDef) uint64 {
	var set uint64
	for v := f.lo; v <= f.hi; v++ {
		set |= 1 << uint(v)
	}
	return set
}

func cronHas(set uint64, v int) bool { return v >= 0 && v < 64 && set&(1<<uint(v)) != 0 }

// nextValue returns the smallest member of set that is >= from, or -1.
func cronNextValue(set uint64, from int) int {
	if from >= 64 {
		return -1
	}
	rest := set >> uint(from) << uint(from)
	if rest == 0 {
		return -1
	}
	return bits.TrailingZeros64(rest)
}

func cronSetValues(set uint64) []int {
	out := make([]int, 0, bits.OnesCount64(set))
	for set != 0 {
		v := bits.TrailingZeros64(set)
		out = append(out, v)
		set &^= 1 << uint(v)
	}
	return out
}
