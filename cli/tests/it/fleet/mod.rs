//! A fleet of `serve` replicas behind a real nginx, their host sessions in a real Redis (feature
//! `fleet-tests`: `redis-server` and `nginx` from Debian's packages must be on the `PATH`; a
//! missing one fails the test). Every process is started by the test on free loopback ports, in
//! a temp dir with its own configuration, and killed at the end.

mod claim;
mod degraded;
mod in_flight;
mod nginx;
mod redis;
mod replica;
mod script;
mod takeover;
mod tokens;
