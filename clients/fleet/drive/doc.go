// Package drive is the contract between a client group (package fleet) and the drivers that
// run its clients, one per client kind (packages wiredriver and libdriver): the Driver
// interface a kind implements, the Client and Books interfaces through which a driver counts
// into the group's books (fleet's *Client and *Fleet implement them), the session as a client
// holds it (Held), what a group hands its driver (Env), and the one connect-and-retry loop
// every driver holds its sessions with (ConnectLoop).
//
// The arrows point here: fleet and the drivers import drive, the drivers never import fleet,
// and fleet is the only one that knows every driver (it picks one per group). drive itself
// imports none of them.
package drive
