// Package storetest is the contract suite every knowledge.Store
// implementation runs: Run(t, open) from the implementation's tests.
package storetest
