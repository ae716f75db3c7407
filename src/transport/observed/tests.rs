//! The wrapper's own answers: loop checks.

use std::sync::Mutex;

use futures::FutureExt;
use rmcp::model::{ClientRequest, PingRequest};

use super::*;

/// Records what it is asked to send; has nothing to receive.
#[derive(Default)]
struct Recording(Arc<Mutex<Vec<RequestId>>>);

impl Transport<RoleClient> for Recording {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = item {
            self.0.lock().unwrap().push(request.id);
        }
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        std::future::pending().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn ping(id: i64, loop_check: bool) -> TxJsonRpcMessage<RoleClient> {
    let mut request = ClientRequest::PingRequest(PingRequest::default());
    if loop_check {
        request.extensions_mut().insert(LoopCheck);
    }
    TxJsonRpcMessage::<RoleClient>::request(request, RequestId::Number(id))
}

#[tokio::test]
async fn a_loop_check_is_answered_here_and_never_sent() {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let activity = Activity::new(false);
    let mut io = Observed::new(
        Recording(sent.clone()),
        activity.clone(),
        "s".into(),
        crate::state::Generation::of(1),
    );
    io.send(ping(1, false)).await.expect("sent");
    io.send(ping(2, true)).await.expect("answered");
    assert_eq!(
        *sent.lock().unwrap(),
        [RequestId::Number(1)],
        "only the ping"
    );

    let answer = io
        .receive()
        .now_or_never()
        .expect("the loop check's answer is there at once")
        .expect("a message");
    match answer {
        JsonRpcMessage::Response(response) => {
            assert_eq!(response.id, RequestId::Number(2));
            assert!(matches!(response.result, ServerResult::EmptyResult(_)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        activity
            .last_rx_ms
            .load(std::sync::atomic::Ordering::Relaxed),
        0,
        "an answer made here says nothing of the server"
    );
    // Nothing else is waiting: the next receive is the wrapped transport's.
    assert!(io.receive().now_or_never().is_none());
}
