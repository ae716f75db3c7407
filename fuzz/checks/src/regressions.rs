//! Every input a fuzz target crashed on, replayed through its target (see FUZZING.md), and the
//! inputs of the bugs found while writing the targets, which the targets' properties catch.
//! Each fix has its own test where it was made, too.

#[test]
fn names_a_cut_hashed_name_is_not_a_tool_named_after_its_hash() {
    // `names`, crash-cd2e672f (first minute of the first run): the server part is cut at 45
    // characters right before a `_`, so the hashed name read as server + `__` + a 12-hex tool,
    // whose own name it also was.
    super::public_name(
        b"tttttttttttttt$ttttttttttttttttttttttpttttttt_\xa9a__[__\x00a\x00b__ca__b__\x00a\x00b__c",
    );
}

#[test]
fn http_an_empty_answer() {
    // `http`, crash-da39a3ee (the empty input): a harness bug, not the library's. The target
    // made an `HttpStatus` error of status 0, which rmcp's client makes only for 429 and 5xx.
    super::http_answer(b"");
}

#[test]
fn http_a_token_that_expires_after_the_end_of_u64() {
    // Found while writing the `http` target: `expires_at` added the authorization server's
    // `expires_in` to the time received, and overflowed (a panic in debug builds, a token
    // expired in 1970 in release).
    super::http_answer(
        br#"200



{"server_url":"https://mcp.example.com/mcp","credentials":{"client_id":"c","token_response":{"access_token":"abcdefghijklmnopqrstuvwxyz0123","token_type":"bearer","expires_in":18446744073709551615},"granted_scopes":[],"token_received_at":1700000000},"saved_at":1700000000}"#,
    );
}

#[test]
fn stdio_a_version_refusal_listing_many_versions() {
    // Found while writing the `stdio` target: the -32022 detail printed the server's
    // `supported` JSON whole, past the one-line 200-byte bound of every other detail.
    let versions = vec!["\"2025-11-25\""; 40].join(",");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":0,"error":{{"code":-32022,"message":"no","data":{{"supported":[{versions}]}}}}}}"#
    );
    super::stdio_output(format!("{line}\n").as_bytes());
}

#[test]
fn sse_a_line_past_both_bounds_names_the_bound_its_first_byte_passed() {
    // `sse`, crash-9db30c69 (exec 299 of the first run): with `max_event` 0 and `max_line` 1,
    // a 22-byte line in one chunk failed as a line past its bound at offset 1, and the same
    // bytes one at a time as an event past its bound at offset 0: the parser checked the line's
    // bound first for the whole piece, so the limit named depended on the chunks.
    super::sse_stream(b"\0\0\x01\0\0\0\0\0etry:\0@\0\0\0\0etry:\0");
}
