//! `transport = "ssh"`: OpenSSH.

use super::{CmdOutput, CmdRequest, Transport, TransportError};
use crate::inventory::Node;

pub struct SshTransport {
    #[allow(dead_code)]
    fanout: usize,
}

impl SshTransport {
    pub fn new(fanout: usize) -> SshTransport {
        SshTransport { fanout }
    }
}

impl Transport for SshTransport {
    fn run(&self, node: &Node, _req: &CmdRequest) -> Result<CmdOutput, TransportError> {
        Err(TransportError::Other { node: node.name.clone(), message: "the SSH transport is not available yet in this build; use transport = \"local\" or --replay".into() })
    }
}
