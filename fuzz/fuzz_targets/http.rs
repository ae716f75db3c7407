//! A Streamable HTTP answer (`status \n retry-after \n www-authenticate \n content-type \n
//! body`), through every error shape rmcp makes of it and our classification.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::http_answer(data));
