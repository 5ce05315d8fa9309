"""Writing a run's results: ``results.json``, ``results.md`` and ``ratios.png``."""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks import baseline
from benchmarks.fmt import fmt_ms

REF = "torch"
PEER_ORDER = ("torch.compile", "jax", "numpy", "numba", "myc-cpu", "myc@base")
NOT_PEERS = ("myc", "myc-cpu", "myc@base")  # myc itself, on another backend or checkout


def fmt_ratio(r: dict | None) -> str:
    if not r:
        return "—"
    lo, hi = r["ci95"]
    return f"{r['ratio']:.2f} [{lo:.2f}, {hi:.2f}]"


def _median(impl: dict | None) -> float | None:
    if impl and impl.get("stats_ms"):
        return impl["stats_ms"]["median"]
    return None


def _cell(impl: dict | None) -> str:
    if impl is None:
        return "—"
    med = _median(impl)
    if med is not None:
        return fmt_ms(med)
    return {"mismatch": "**MISMATCH**", "error": "error"}.get(impl.get("status"), "—")


def peers_in(results: dict) -> list[str]:
    seen = set()
    for rec in results["workloads"].values():
        seen.update(rec.get("implementations", {}))
    return [p for p in PEER_ORDER if p in seen]


def best_peer(rec: dict) -> tuple[str, dict] | None:
    """The fastest non-myc implementation that was timed, with the myc/it ratio (myc's
    own cpu backend, a column beside another backend, and the baseline's myc are no
    peers)."""
    impls = rec.get("implementations", {})
    timed = [(n, _median(i)) for n, i in impls.items()
             if n not in NOT_PEERS and _median(i)]
    if not timed or not _median(impls.get("myc")):
        return None
    name = min(timed, key=lambda t: t[1])[0]
    ratio = rec.get("ratios", {}).get(f"myc/{name}")
    return (name, ratio) if ratio else None


def _clean(obj):
    """Strict JSON: NumPy scalars to Python, NaN and infinities to null."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(results: dict, path: Path) -> None:
    path.write_text(json.dumps(_clean(results), indent=1, allow_nan=False) + "\n")


def render_markdown(results: dict) -> str:
    env, cfg = results["environment"], results["config"]
    peers = peers_in(results)
    th = env.get("threads", {})
    v = env.get("versions", {})
    git = env.get("git", {})
    lines = [
        "# myc benchmark results",
        "",
        f"- command: `{results.get('command', '')}`",
        f"- date: {env.get('date')}; git {str(git.get('commit'))[:12]}"
        + (" (dirty)" if git.get("dirty") else ""),
        f"- machine: {env.get('cpu_model')}, {env.get('available_cores')} cores available "
        f"of {env.get('logical_cores')}, {env.get('memory_gib')} GiB; {env.get('os')}; "
        f"vector ISA {env.get('vector_isa', '?')}; myc subnormals "
        f"{env.get('myc_subnormals', '?')}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- backend `{cfg['backend']}`, sizes `{cfg['size']}`, seed {cfg['seed']}, threads "
        f"{cfg['threads']} (torch {th.get('torch_num_threads')}, MYC_NUM_THREADS "
        f"{th.get('env', {}).get('MYC_NUM_THREADS')}), budget {cfg['time_budget']} s/workload, "
        f"target CI +-{100 * cfg['precision']:.0f}%",
        f"- load average (1, 5, 15 min) at start {env.get('load_average_start')}, at end "
        f"{env.get('load_average_end')}"
        + (
            f" — **--contend: core {env['contention']['busy_core']} kept busy by another "
            "process for the whole run**"
            if env.get("contention")
            else ""
        )
        + (
            " — **the machine was busy: other processes competed for the cores**"
            if (env.get("load_average_start") or [0])[0] >= 0.5
            else ""
        ),
        "",
        "## Steady state",
        "",
        "Median milliseconds per call over interleaved rounds (each timed call after an "
        "untimed call of the same implementation, `--settle`); ratio = myc median / PyTorch "
        "eager median with its paired-bootstrap 95% CI (below 1: myc faster).",
        "",
    ]
    head = [
        "workload",
        "size",
        "myc",
        "torch eager",
        *peers,
        "myc/torch [95% CI]",
        "myc/best peer",
        "status",
    ]
    lines += [
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 4) + ["---", "---"]) + "|",
    ]
    for name, rec in results["workloads"].items():
        impls = rec.get("implementations", {})
        bp = best_peer(rec)
        row = [
            f"{name} {rec['title']}",
            rec["size_label"],
            _cell(impls.get("myc")),
            _cell(impls.get(REF)),
            *[_cell(impls.get(p)) for p in peers],
            fmt_ratio(rec.get("ratios", {}).get(f"myc/{REF}")),
            f"{fmt_ratio(bp[1])} vs {bp[0]}" if bp else "—",
            rec["status"],
        ]
        lines.append("| " + " | ".join(row) + " |")

    lines += [
        "",
        "## Spread, correctness, memory",
        "",
        "| workload | impl | n | median | IQR | min | max rel. error vs torch | peak MiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, rec in results["workloads"].items():
        for impl_name, impl in rec.get("implementations", {}).items():
            st = impl.get("stats_ms") or {}
            chk = impl.get("check") or {}
            err = (
                "reference"
                if chk.get("reference")
                else (f"{chk['max_rel_err']:.1e}" if "max_rel_err" in chk else "—")
            )
            mem = impl.get("peak_mem_mib")
            lines.append(
                f"| {name} | {impl_name} | {st.get('n', '—')} | {fmt_ms(st.get('median'))} | "
                f"{fmt_ms(st.get('iqr'))} | {fmt_ms(st.get('min'))} | {err} | "
                f"{'—' if mem is None else f'{mem:.1f}'} |"
            )
    compiled = [p for p in peers if p not in ("numpy", "myc@base")]  # myc@base: below
    lines += [
        "",
        f"Peak memory: {results.get('memory_method')}, extra resident memory at the peak of "
        "one call (see docs/benchmarks.md).",
        "",
        "## First call (ms): compile plus one run",
        "",
        "myc cold: fresh `myc.jit` wrapper, empty `MYC_CACHE_DIR`; disk cache: fresh wrapper, "
        f"cache filled by the cold call (medians of {cfg['first_call_repeats']}). "
        "Peers: a fresh jit/compile and its first call. "
        "torch eager: the workload's first call in this process.",
        "",
        "| "
        + " | ".join(["workload", "myc cold", "myc disk cache", "torch eager", *compiled])
        + " |",
        "|---|" + "---:|" * (3 + len(compiled)),
    ]
    for name, rec in results["workloads"].items():
        impls = rec.get("implementations", {})
        fc = impls.get("myc", {}).get("first_call", {})
        cells = [
            fmt_ms(fc.get("cold_median_ms")),
            fmt_ms(fc.get("disk_cache_median_ms")),
            fmt_ms(impls.get(REF, {}).get("first_call_ms")),
        ]
        cells += [fmt_ms(impls.get(p, {}).get("first_call_ms")) for p in compiled]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    lines += baseline.markdown(results)
    problems = []
    for name, rec in results["workloads"].items():
        for impl_name, impl in rec.get("implementations", {}).items():
            if impl.get("status") == "mismatch":
                chk = impl["check"]
                problems.append(
                    f"- **{name} {impl_name}: MISMATCH** — {chk.get('reason')}; max abs error "
                    f"{chk['max_abs_err']:.3g}, max rel error {chk['max_rel_err']:.3g} "
                    f"(rtol {chk['rtol']}, atol {chk['atol']})"
                )
            elif impl.get("status") == "error":
                msg = impl.get("error", {}).get("message", "").splitlines()
                problems.append(f"- {name} {impl_name}: error — `{msg[0] if msg else ''}`")
    if problems:
        lines += ["", "## Mismatches and errors", "", *problems]
    return "\n".join(lines) + "\n"


def write_plot(results: dict, path: Path) -> bool:
    """Each implementation's time relative to PyTorch eager, log scale, 95% CI bars.

    Returns False (and draws nothing) where matplotlib is not installed: a run's figures
    are in the JSON and markdown, which are written first, so minutes of measuring are
    never lost to a missing plotting library.
    """
    try:
        import matplotlib
    except ImportError:
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results["workloads"])
    impls = ["myc", *peers_in(results)]
    colors = {
        "myc": "#d62728",
        "torch.compile": "#1f77b4",
        "jax": "#2ca02c",
        "numpy": "#7f7f7f",
        "numba": "#9467bd",
    }
    fig, ax = plt.subplots(figsize=(8, 1.0 + 0.55 * max(len(names), 1)), dpi=120)
    any_point = False
    step = 0.7 / max(len(impls), 1)
    for j, impl in enumerate(impls):
        ys, xs, lo_err, hi_err = [], [], [], []
        for i, name in enumerate(names):
            r = results["workloads"][name].get("ratios", {}).get(f"{impl}/{REF}")
            if not r:
                continue
            lo, hi = r["ci95"]
            ys.append(len(names) - 1 - i + 0.35 - (j + 0.5) * step)
            xs.append(r["ratio"])
            lo_err.append(max(r["ratio"] - lo, 0.0))
            hi_err.append(max(hi - r["ratio"], 0.0))
        if xs:
            any_point = True
            ax.errorbar(
                xs,
                ys,
                xerr=[lo_err, hi_err],
                fmt="o",
                capsize=3,
                label=impl,
                color=colors.get(impl),
            )
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(list(reversed(names)))
    ax.set_ylim(-0.6, max(len(names), 1) - 0.4)
    ax.set_xscale("log")
    ax.set_xlabel("time / PyTorch eager time (log scale; < 1 is faster)")
    env = results["environment"]
    ax.set_title(
        f"myc benchmarks, backend {results['config']['backend']}, sizes "
        f"{results['config']['size']}, {results['config']['threads']} threads\n"
        f"{env.get('cpu_model')}; median ratio with 95% bootstrap CI",
        fontsize=9,
    )
    if any_point:
        ax.legend(fontsize=8, loc="best")
    else:
        ax.set_xlim(0.1, 10)
        ax.text(
            1.0,
            (len(names) - 1) / 2,
            "no timed ratios (see results.md)",
            ha="center",
            va="center",
            fontsize=10,
        )
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def write_all(results: dict, out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / "results.json",
        "markdown": out_dir / "results.md",
        "plot": out_dir / "ratios.png",
    }
    write_json(results, paths["json"])
    paths["markdown"].write_text(render_markdown(results))
    if not write_plot(results, paths["plot"]):
        del paths["plot"]
    return paths
