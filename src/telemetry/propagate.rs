//! W3C trace context in `params._meta` (SEP-414; the conventions' "Context propagation"): the
//! keys are written unprefixed (`traceparent`, `tracestate`, and `baggage` when the propagator
//! writes it), through whatever text map propagator the application installed globally.

use opentelemetry::{Context, global, propagation::Injector};
use rmcp::model::{ClientRequest, GetMeta, RequestMetaObject};

/// Writes `cx` into the request's `_meta`. The request's own `_meta` (from the params, such as a
/// host's forwarded by the proxy) is overwritten key by key: rmcp gives this one precedence.
pub(super) fn inject(cx: &Context, request: &mut ClientRequest) {
    global::get_text_map_propagator(|propagator| {
        propagator.inject_context(cx, &mut Meta(request.get_meta_mut()));
    });
}

struct Meta<'a>(&'a mut RequestMetaObject);

impl Injector for Meta<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0
            .insert(key.to_owned(), serde_json::Value::String(value));
    }
}
