//! Public-name normalization: `server \0 tool [\0 server \0 tool]`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::public_name(data));
