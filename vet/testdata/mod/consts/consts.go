// Package consts holds key prefixes, as a service might share them.
package consts

// CartPrefix is the prefix of cart keys.
const CartPrefix = "v1:cart:"

// Bogus is a prefix no family has.
const Bogus = "v9:nothing:"
