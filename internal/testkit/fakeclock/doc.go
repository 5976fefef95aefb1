// Package fakeclock is a clock that tests set and move by hand, for the
// Now/Clock options of the packages under test. It is for tests only.
package fakeclock
