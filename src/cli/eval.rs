//! `eval`: how well search finds the right tool on a benchmark, and with
//! `--replay` how much learning from use adds.

use std::process::ExitCode;

use anyhow::bail;

use config::Config;

/// `eval`: BM25, and with the embedding model of `[search.semantic]` also
/// semantic-only and hybrid (tool embeddings cached like the gateway's).
pub(super) async fn measure(
    config: &Config,
    data: &std::path::Path,
    json: bool,
    weights: search::bm25::Weights,
    alpha: f32,
) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&alpha) {
        bail!("--alpha must be between 0 and 1, got {alpha}");
    }
    let bench = crate::eval::Bench::load(data)?;
    let semantic = search::semantic::start(config.semantic.as_ref())?.ready();
    let started = std::time::Instant::now();
    let report = crate::eval::report(&bench, weights, semantic, alpha).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} tools from {} servers, {} tasks ({} ms)\n",
        bench.tool_count(),
        bench.servers.len(),
        bench.tasks.len(),
        started.elapsed().as_millis()
    );
    println!(
        "{:<32} {:>5} {:>8} {:>8} {:>8} {:>8}",
        "GROUP", "TASKS", "R@1", "R@5", "R@10", "MRR@10"
    );
    for (group, s) in &report {
        println!(
            "{group:<32} {:>5} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            s.tasks, s.recall_at_1, s.recall_at_5, s.recall_at_10, s.mrr_at_10
        );
    }
    let holdout: Vec<&crate::eval::Task> = bench.tasks.iter().filter(|t| t.split == "holdout").collect();
    println!("\nrelevance cut-offs (held-out single-tool tasks, top 10 each):");
    for c in crate::eval::calibration(&bench.view(weights, None)?, &holdout).await {
        println!(
            "  relevance >= {:.2}: {:>5.1}% of kept results are right, {:>5.1}% of right results kept",
            c.at,
            100.0 * c.precision,
            100.0 * c.kept
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `eval --replay`: scored quality before and after replayed use, for BM25
/// and (with the model) hybrid search with each kind of lesson, on the
/// benchmark's split and pooled over the leave-servers-out folds.
pub(super) async fn replay(config: &Config, data: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    use crate::eval::replay::{self, Lessons, Run};
    let bench = crate::eval::Bench::load(data)?;
    let paraphrases = replay::load_paraphrases(data)?;
    let semantic = search::semantic::start(config.semantic.as_ref())?.ready();
    if let Some(model) = &semantic {
        model.keep_queries(replay::QUERIES_KEPT);
    }
    let view = bench.view(Default::default(), semantic.as_deref())?;
    let holdout = replay::holdout(&bench, &paraphrases);
    let folds = replay::server_folds(&bench, &paraphrases, replay::SERVER_FOLDS);
    let run = |search: &str, lessons, with_failures| Run {
        search: search.to_string(),
        lessons,
        with_failures,
        blend: Default::default(),
        score: true,
    };
    // Every replay, listed first so that stderr can say which one runs
    // (each takes seconds to minutes). Failures are shown to teach nothing
    // once, with every lesson on.
    let hybrid_kinds = |with_failures| match (&semantic, with_failures) {
        (None, _) => &[][..],
        (Some(_), false) => &Lessons::ALL[..],
        (Some(_), true) => &[Lessons::Both][..],
    };
    let holdout_runs: Vec<Run> = [false, true]
        .into_iter()
        .flat_map(|failing| {
            let hybrid = hybrid_kinds(failing).iter().map(move |&l| run("hybrid", l, failing));
            std::iter::once(run("bm25", Lessons::Terms, failing)).chain(hybrid)
        })
        .collect();
    let fold_runs: Vec<Run> = std::iter::once(run("bm25", Lessons::Terms, false))
        .chain(hybrid_kinds(false).iter().map(|&l| run("hybrid", l, false)))
        .collect();
    let runs = holdout_runs.len() + fold_runs.len() * folds.len();
    let mut started = 0;
    let mut replay_one = async |split: &replay::Split, r: &Run| {
        started += 1;
        let failing = if r.with_failures {
            ", a failing execute after each call"
        } else {
            ""
        };
        eprintln!(
            "replay {started}/{runs}: {}, {} {}{failing}",
            split.name,
            r.search,
            r.lessons.label()
        );
        match (r.search.as_str(), &semantic) {
            ("hybrid", Some(model)) => {
                let hybrid = gateway::rank::Hybrid::new(model.clone());
                replay::replay(&hybrid, Some(model), &view, split, r).await
            }
            _ => replay::replay(&gateway::rank::Bm25, None, &view, split, r).await,
        }
    };
    let mut points = Vec::new();
    for r in &holdout_runs {
        points.extend(replay_one(&holdout, r).await?);
    }
    for r in &fold_runs {
        let mut per_fold = Vec::new();
        for fold in &folds {
            per_fold.push(replay_one(fold, r).await?);
        }
        for at in 0..per_fold[0].len() {
            let same: Vec<_> = per_fold.iter().filter_map(|f| f.get(at).cloned()).collect();
            points.extend(replay::pooled(&format!("servers (pooled over {})", folds.len()), &same));
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&points)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "holdout: {} tune-side calls replayed (tasks, and paraphrases of the held-out tasks' tools); scored: held-out single-tool tasks, and multi-step tasks one query per step",
        holdout.history.len(),
    );
    println!(
        "servers: {} folds of the servers; scored: every task about a fold's servers; replayed: the other tasks, and paraphrases of the scored tasks' tools\n",
        folds.len()
    );
    println!(
        "{:<22} {:<7} {:<9} {:>6} {:>7} {:>6} {:>7} | {:>7} {:>7} {:>7} | {:>8} {:>7} {:>7}",
        "SPLIT",
        "SEARCH",
        "LESSONS",
        "CALLS",
        "TAUGHT",
        "FAILS",
        "SEEN@5",
        "R@1",
        "R@5",
        "MRR@10",
        "STEP R@1",
        "R@5",
        "MRR@10"
    );
    for p in &points {
        println!(
            "{:<22} {:<7} {:<9} {:>6} {:>7} {:>6} {:>7.3} | {:>7.3} {:>7.3} {:>7.3} | {:>8.3} {:>7.3} {:>7.3}",
            p.split,
            p.search,
            p.lessons,
            p.calls,
            p.taught,
            if p.with_failures { "yes" } else { "no" },
            p.replayed_r5,
            p.single.recall_at_1,
            p.single.recall_at_5,
            p.single.mrr_at_10,
            p.steps.recall_at_1,
            p.steps.recall_at_5,
            p.steps.mrr_at_10
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `eval --replay --tune-meanings`, or with `evidence` `--tune-evidence`:
/// how the memory of meanings' blend, then the evidence a lift must
/// outweigh, were set. Only the replayed calls are scored (how often the
/// right tool was in the top 5 when asked, before it taught; and with
/// `evidence`, the calls learning put first or pushed from first): the
/// project's own history, never the held-out half.
pub(super) async fn tune(config: &Config, data: &std::path::Path, evidence: bool) -> anyhow::Result<ExitCode> {
    use crate::eval::replay::{self, Lessons, Run};
    use learning::meanings::Blend;
    let bench = crate::eval::Bench::load(data)?;
    let paraphrases = replay::load_paraphrases(data)?;
    let model = search::semantic::start(config.semantic.as_ref())?
        .ready()
        .ok_or_else(|| {
            anyhow::anyhow!("tuning the memory of meanings needs the embedding model (mcp-gateway model install)")
        })?;
    model.keep_queries(replay::QUERIES_KEPT);
    let view = bench.view(Default::default(), Some(&model))?;
    let holdout = replay::holdout(&bench, &paraphrases);
    let hybrid = gateway::rank::Hybrid::new(model.clone());
    println!(
        "{:<9} {:>5} {:>3} {:>5} {:>5} {:>4} | SEEN@5 per checkpoint window{}",
        "LESSONS",
        "FLOOR",
        "K",
        "SMOO",
        "CAP",
        "EVID",
        if evidence { " (first: won/lost)" } else { "" }
    );
    let mut blends = vec![(Lessons::Terms, Blend::default())];
    if evidence {
        for evidence in [0.0, 1.0, 2.0, 3.0, 5.0, 8.0] {
            blends.push((
                Lessons::Both,
                Blend {
                    evidence,
                    ..Blend::default()
                },
            ));
        }
    } else {
        for lessons in [Lessons::Meanings, Lessons::Both] {
            for floor in [0.0, 0.1, 0.2, 0.3] {
                for neighbours in [4, 8, 16] {
                    for smoothing in [0.05, 0.1, 0.25] {
                        // The blend was set before evidence was weighed.
                        let blend = Blend {
                            floor,
                            neighbours,
                            smoothing,
                            evidence: 0.0,
                            ..Blend::default()
                        };
                        blends.push((lessons, blend));
                    }
                }
            }
        }
    }
    for (lessons, blend) in blends {
        let run = Run {
            search: "hybrid".into(),
            lessons,
            with_failures: false,
            blend,
            score: false,
        };
        let points = replay::replay(&hybrid, Some(&model), &view, &holdout, &run).await?;
        let seen: Vec<String> = points
            .iter()
            .skip(1)
            .map(|p| match evidence {
                true => format!(
                    "{}: {:.3} ({}/{})",
                    p.calls, p.replayed_r5, p.replayed_top1.0, p.replayed_top1.1
                ),
                false => format!("{}: {:.3}", p.calls, p.replayed_r5),
            })
            .collect();
        println!(
            "{:<9} {:>5.2} {:>3} {:>5.2} {:>5.2} {:>4} | {}",
            lessons.label(),
            blend.floor,
            blend.neighbours,
            blend.smoothing,
            blend.cap,
            blend.evidence,
            seen.join("  ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
