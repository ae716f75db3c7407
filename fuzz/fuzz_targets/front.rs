//! Requests to the gateway's own host-facing front (`serve --front own`), in memory: a
//! selector byte, header lines, a body, up to six of them separated by NUL; two sessions open.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::own_front(data));
