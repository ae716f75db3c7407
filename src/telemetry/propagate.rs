//! W3C trace context in `params._meta` (SEP-414; the conventions' "Context propagation"): the
//! keys are written unprefixed (`traceparent`, `tracestate`, and `baggage` when the propagator
//! writes it), through whatever text map propagator the application installed globally.

#[cfg(feature = "proxy")]
use opentelemetry::propagation::Extractor;
use opentelemetry::{Context, global, propagation::Injector};
#[cfg(feature = "proxy")]
use rmcp::model::JsonObject;
use rmcp::model::{ClientRequest, GetMeta, RequestMetaObject};

/// Writes `cx` into the request's `_meta`. The request's own `_meta` (from the params, such as a
/// host's forwarded by the proxy) is overwritten key by key: rmcp gives this one precedence.
pub(super) fn inject(cx: &Context, request: &mut ClientRequest) {
    global::get_text_map_propagator(|propagator| {
        propagator.inject_context(cx, &mut Meta(request.get_meta_mut()));
    });
}

/// The context a request's `_meta` carries (the remote parent), or the current one.
#[cfg(feature = "proxy")]
pub(super) fn extract(meta: Option<&RequestMetaObject>) -> Context {
    match meta {
        Some(meta) => {
            global::get_text_map_propagator(|propagator| propagator.extract(&Fields(&meta.0.0)))
        }
        None => Context::current(),
    }
}

struct Meta<'a>(&'a mut RequestMetaObject);

impl Injector for Meta<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0
            .insert(key.to_owned(), serde_json::Value::String(value));
    }
}

#[cfg(feature = "proxy")]
struct Fields<'a>(&'a JsonObject);

#[cfg(feature = "proxy")]
impl Extractor for Fields<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(serde_json::Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
