//! How every loom model is run.

/// Explore every interleaving of `model` with at most `preemptions` forced
/// thread switches. Each model states its bound in code, next to why, so
/// the suite runs as written, with no environment variables.
pub(crate) fn check(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(model);
}
