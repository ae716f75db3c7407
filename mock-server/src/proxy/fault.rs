//! [`GatewayFault`]: which POSTs the HTTP proxy answers itself, and the plan that decides it.
//!
//! # Invariants
//!
//! 1. Only POSTs that match (`methods` empty, or a JSON-RPC `method` — any element's, for a
//!    batch — listed in `methods`) advance the plan; other requests never change the pattern.
//! 2. The pattern depends only on the fault and the order of matching POSTs: deterministic
//!    mode answers exactly the `every`-th, `2·every`-th, …; seeded mode draws from a SplitMix64
//!    seeded with `seed`, so the same seed gives the same pattern. `set_fault` restarts both.

use serde_json::Value;

/// A gateway that answers some JSON-RPC POSTs itself instead of forwarding them, as an
/// overloaded load balancer answers `429 Too Many Requests` or `503 Service Unavailable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayFault {
    /// The status the proxy answers with. A value that is not a valid HTTP status is answered
    /// as `500`.
    pub status: u16,
    /// The `Retry-After` header value sent with it (e.g. `"1"`), if any.
    ///
    /// # Default
    /// `None`: no header.
    pub retry_after: Option<String>,
    /// Answer one matching POST in `every`: each `every`-th one when `seed` is `None`, or each
    /// with probability `1/every` when it is `Some`. 0 never answers; 1 answers all.
    pub every: u32,
    /// JSON-RPC methods (e.g. `"tools/call"`) whose POSTs may be answered.
    ///
    /// # Default
    /// Empty: every POST matches, and bodies are not even parsed.
    pub methods: Vec<String>,
    /// Seed of the PRNG that picks the answered POSTs.
    ///
    /// # Default
    /// `None`: deterministic, every `every`-th.
    pub seed: Option<u64>,
}

impl GatewayFault {
    /// Answers every `every`-th POST, whatever its method, with `status` and no `Retry-After`.
    pub fn new(status: u16, every: u32) -> GatewayFault {
        GatewayFault {
            status,
            retry_after: None,
            every,
            methods: Vec::new(),
            seed: None,
        }
    }

    /// True when the body must be read to know whether a POST matches.
    pub(super) fn needs_body(&self) -> bool {
        !self.methods.is_empty()
    }

    /// Invariant 1; `body` is only looked at when [`GatewayFault::needs_body`].
    pub(super) fn matches(&self, body: &[u8]) -> bool {
        methods_match(&self.methods, body)
    }
}

/// True when `methods` is empty, or names the JSON-RPC `method` of `body` (of any element of
/// a batch). Shared with [`super::cut::StreamCut`].
pub(super) fn methods_match(methods: &[String], body: &[u8]) -> bool {
    if methods.is_empty() {
        return true;
    }
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let listed = |message: &Value| {
        message["method"]
            .as_str()
            .is_some_and(|method| methods.iter().any(|m| m == method))
    };
    match &value {
        Value::Array(batch) => batch.iter().any(listed),
        message => listed(message),
    }
}

/// A fault plus how far along its pattern the proxy is; owned by the proxy's fault slot.
#[derive(Debug)]
pub(super) struct FaultPlan {
    pub(super) fault: GatewayFault,
    /// Matching POSTs seen since the fault was set.
    seen: u64,
    rng: SplitMix64,
}

impl FaultPlan {
    pub(super) fn new(fault: GatewayFault) -> FaultPlan {
        let rng = SplitMix64(fault.seed.unwrap_or(0));
        FaultPlan {
            fault,
            seen: 0,
            rng,
        }
    }

    /// Counts one matching POST and says whether the proxy answers it (invariant 2).
    pub(super) fn answer_next(&mut self) -> bool {
        self.seen += 1;
        let every = u64::from(self.fault.every);
        if every == 0 {
            return false;
        }
        match self.fault.seed {
            None => self.seen.is_multiple_of(every),
            Some(_) => self.rng.next().is_multiple_of(every),
        }
    }
}

/// Steele, Lea and Flood's SplitMix64: tiny, and good enough to scatter faults.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(fault: GatewayFault, n: usize) -> Vec<bool> {
        let mut plan = FaultPlan::new(fault);
        (0..n).map(|_| plan.answer_next()).collect()
    }

    #[test]
    fn deterministic_mode_answers_every_nth() {
        let answered: Vec<usize> = (1..=9)
            .zip(pattern(GatewayFault::new(429, 3), 9))
            .filter_map(|(n, answered)| answered.then_some(n))
            .collect();
        assert_eq!(answered, [3, 6, 9]);
        assert!(!pattern(GatewayFault::new(429, 0), 9).contains(&true));
        assert!(!pattern(GatewayFault::new(429, 1), 9).contains(&false));
    }

    #[test]
    fn seeded_mode_repeats_for_a_seed_and_scatters() {
        let seeded = |seed| GatewayFault {
            seed: Some(seed),
            ..GatewayFault::new(503, 4)
        };
        let first = pattern(seeded(7), 400);
        assert_eq!(first, pattern(seeded(7), 400));
        assert_ne!(first, pattern(seeded(8), 400));
        let answered = first.iter().filter(|a| **a).count();
        assert!((60..=140).contains(&answered), "{answered} of 400 at 1/4");
    }

    #[test]
    fn matches_listed_methods_in_messages_and_batches() {
        let fault = GatewayFault {
            methods: vec!["tools/call".into()],
            ..GatewayFault::new(429, 1)
        };
        assert!(fault.needs_body());
        assert!(fault.matches(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#));
        assert!(fault.matches(br#"[{"method":"ping"},{"method":"tools/call"}]"#));
        assert!(!fault.matches(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        assert!(!fault.matches(br#"[{"method":"ping"}]"#));
        assert!(!fault.matches(b"{not json"));
        assert!(GatewayFault::new(429, 1).matches(b"anything"));
    }
}
