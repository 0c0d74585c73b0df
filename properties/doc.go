// Package properties holds the lab's rapid property tests, exported as
// functions so the fuzz package can reuse them.
package properties
