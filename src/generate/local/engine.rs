//! Continuous batching for the local backend: one thread owns the decoding
//! loop, and every prompt in flight advances by one token per step, in one
//! `Llama::decode_step` for all of them, so the weights are read once per
//! step however many sequences share it.
//!
//! A caller hands in a prompt and waits for its answer; a new prompt is
//! prefilled between two steps and joins the next one, and a finished one
//! leaves at once, so a slot never waits for the slowest sequence of a batch.
//! How many are in flight is the callers' choice (the backend's
//! concurrency). Not here: what a token means, or when a sequence ends
//! (`Sequence`, in the parent module), or the model's arithmetic
//! (`llama.rs`).

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

use super::llama::KvCache;
use super::{Decoder, GenerateError, IdGeneration, Sequence, local_error};
use crate::generate::Params;

/// A prompt to answer, and where its answer goes.
pub(super) struct Request {
    pub prompt_ids: Vec<u32>,
    pub params: Params,
    pub reply: Sender<Result<IdGeneration, GenerateError>>,
}

/// A sequence in flight: the token it feeds next, and who waits for it.
struct InFlight {
    sequence: Sequence,
    next: u32,
    reply: Sender<Result<IdGeneration, GenerateError>>,
}

/// Runs until every sender of `requests` is gone.
pub(super) fn run(decoder: Arc<Decoder>, requests: Receiver<Request>) {
    let mut in_flight: Vec<InFlight> = Vec::new();
    loop {
        // Block only when there is nothing to step.
        let arrived = if in_flight.is_empty() {
            match requests.recv() {
                Ok(request) => vec![request],
                Err(_) => return,
            }
        } else {
            // A closed channel still ends the loop: once nothing is in flight.
            std::iter::from_fn(|| requests.try_recv().ok()).collect()
        };
        for request in arrived {
            start(&decoder, request, &mut in_flight);
        }
        if !in_flight.is_empty() {
            step(&decoder, &mut in_flight);
        }
    }
}

/// Prefills a new prompt; it joins the batch unless it is already done.
fn start(decoder: &Decoder, request: Request, in_flight: &mut Vec<InFlight>) {
    let started = decoder.start(request.prompt_ids, &request.params);
    match started {
        Ok((sequence, Some(next))) => in_flight.push(InFlight {
            sequence,
            next,
            reply: request.reply,
        }),
        Ok((sequence, None)) => {
            // The caller may have gone; nobody is left to tell.
            let _ = request.reply.send(Ok(decoder.finish(sequence)));
        }
        Err(e) => {
            let _ = request.reply.send(Err(e));
        }
    }
}

/// One decode step for every sequence in flight; finished ones are answered
/// and leave.
fn step(decoder: &Decoder, in_flight: &mut Vec<InFlight>) {
    decoder
        .widest_step
        .fetch_max(in_flight.len(), std::sync::atomic::Ordering::Relaxed);
    let tokens: Vec<u32> = in_flight.iter().map(|f| f.next).collect();
    let positions: Vec<usize> = in_flight.iter().map(|f| f.sequence.position()).collect();
    let mut caches: Vec<&mut KvCache> = in_flight
        .iter_mut()
        .map(|f| &mut f.sequence.cache)
        .collect();
    let rows = decoder
        .model
        .decode_step(&mut caches, &tokens, &positions)
        .and_then(|logits| logits.to_vec2::<f32>())
        .map_err(local_error);
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            for flight in in_flight.drain(..) {
                let _ = flight.reply.send(Err(GenerateError::Local(e.to_string())));
            }
            return;
        }
    };
    let mut still = Vec::with_capacity(in_flight.len());
    for (mut flight, logits) in in_flight.drain(..).zip(rows) {
        match decoder.advance(&mut flight.sequence, &logits) {
            Ok(Some(next)) => {
                flight.next = next;
                still.push(flight);
            }
            Ok(None) => {
                let _ = flight.reply.send(Ok(decoder.finish(flight.sequence)));
            }
            Err(e) => {
                let _ = flight.reply.send(Err(e));
            }
        }
    }
    *in_flight = still;
}
