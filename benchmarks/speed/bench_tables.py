"""The speed harness's report as text tables (bench.py prints them; bench_summary.py computes what they show)."""


PHASES = ("vision", "llm", "bank", "retrieval", "gather", "prefill", "decode", "other")


def print_host_work(work):
    """The host work table: 'ops/syncs' per phase, in the order the work happens."""
    def order(counts):
        return [p for p in PHASES if p in counts["ops"]]

    def cells(counts):
        return "".join(f"{counts['ops'][p]:>10,.0f}/{counts['syncs'][p]:<5,.0f}" for p in order(counts))
    for i, (regime, c) in enumerate(work["per_frame"].items()):
        if i == 0:
            print(f"\n{'operator calls/host syncs':<28}" + "".join(f"{p:>16}" for p in order(c)))
        print(f"  {'per frame, ' + regime.replace('_', ' '):<26}{cells(c)}")
    for i, q in enumerate(work["per_question"]):
        if i == 0:
            print(f"{'':<28}" + "".join(f"{p:>16}" for p in order(q)))
        print(f"  {'question after ' + str(q['after_frames']) + ' frames':<26}{cells(q)}")


def print_against(c, load):
    print(f"\n{'this tree against ' + c['rev'][:12] + ' (same export, same run)':<44}{c['rev'][:9]:>10}{'this':>10}"
          f"{'this/rev':>10}   load average {load}")
    for key, ratio in c["ours_over_theirs"].items():
        print(f"  {key:<42}{c['theirs'][key]:>10.3f}{c['ours'][key]:>10.3f}{ratio:>10.2f}")


def mib(b):
    return f"{b / 2**20:,.0f} MiB"


def print_table(report):
    m, s = report["measured"], report["summary"]
    shape, st = m["shape"], m["settings"]
    print(f"svqa speed ({report['mode']}): LLM {shape['layers']} layers, hidden {shape['hidden']}, "
          f"{shape['heads']}/{shape['kv_heads']} heads, {shape['tokens_per_unit']} tokens per {shape['frames_per_unit']} frame(s), {st['dtype']}, "
          f"{st['device']}, {st['threads']} threads, malloc {st.get('malloc', 'glibc')}; n_local {st['n_local']}, r {st['retrieve_size']}; "
          f"load average {report['load_before']} → {report['load_after']}; {report['machine']}; "
          f"OMP_WAIT_POLICY={report['omp_wait_policy']}")
    if "peak_flops_per_s" in m:
        print(f"\nmatmul peak (2048³): {m['peak_flops_per_s'] / 1e9:.0f} GFLOP/s")
    print(f"\n{'encode (per frame)':<28}{'LLM s':>9}{'floor s':>9}{'× floor':>9}{'× peak':>8}{'GFLOP':>8}"
          f"{'vision s':>10}{'floor s':>9}{'× floor':>9}{'frames':>8}")
    for regime, e in s["encode"].items():
        print(f"  {regime.replace('_', ' '):<26}{e['s_per_frame']:>9.3f}{e['floor_s_per_frame']:>9.3f}{e['x_floor']:>9.2f}"
              f"{e['x_peak']:>8.2f}{e['gflops_per_frame']:>8.1f}{e['vision_s_per_frame']:>10.3f}"
              f"{e['vision_floor_s_per_frame']:>9.3f}{e['vision_x_floor']:>9.2f}{e['frames']:>8}")
    print(f"\n{'time to first token':<22}{'retrieve':>9}{'gather':>8}{'prefill':>9}{'TTFT':>8}{'gather %':>9}"
          f"{'floor s':>9}{'× floor':>8}{'HF re-prefill':>14}{'TTFT/HF':>9}{'floor/HF':>9}{'peak/HF':>9}{'FLOP/HF':>9}"
          f"{'HF GFLOP/s':>11}")
    for r in s["ttft"]:
        hf = f"{r['hf_reprefill_s']:.2f} s" if r["hf_reprefill_s"] else "-"
        ratio = f"{r['x_hf']:.4f}" if r["x_hf"] else "-"
        floor = f"{r['floor_s']:.3f}" if r["floor_s"] else "-"
        x_floor = f"{r['x_floor']:.2f}" if r["x_floor"] else "-"
        floor_hf = f"{r['floor_x_hf']:.4f}" if r["floor_x_hf"] else "-"
        peak_hf = f"{r['peak_x_hf']:.4f}" if r["peak_x_hf"] else "-"
        flops_hf = f"{r['flops_x_hf']:.4f}" if r["flops_x_hf"] else "-"
        hf_rate = f"{r['hf_gflops_per_s']:.0f}" if r["hf_gflops_per_s"] else "-"
        print(f"  after {r['after_frames']:>4} frames{'':<5}{r['retrieve_s']:>9.3f}{r['gather_s']:>8.3f}{r['prefill_s']:>9.3f}"
              f"{r['ttft_s']:>8.3f}{100 * r['gather_share']:>8.0f}%{floor:>9}{x_floor:>8}{hf:>14}{ratio:>9}{floor_hf:>9}"
              f"{peak_hf:>9}{flops_hf:>9}{hf_rate:>11}")
    print_host_work(s["host_work"])
    mem = s["memory"]
    print(f"\nmemory: RSS after loading {mib(mem['rss_loaded'])}, peak {mib(mem['peak_rss'])} "
          f"(+{mib(mem['peak_minus_loaded'])} = {mem['x_bank_and_window']:.2f}× bank + window); "
          f"bank {mib(mem['bank_bytes'])} ({mem['bank_bytes_per_frame'] / 2**20:.2f} MiB/frame), "
          f"window {mib(mem['window_bytes'])}; KV {mem['kv_gb_per_hour_at_0.5fps']:.2f} GB/hour at 0.5 fps; "
          f"peak = {mem['x_weights_bank_and_window']:.2f}× (weights {mib(mem['weights_bytes'])} + bank + window)")
    if "vision" in mem:
        v = mem["vision"]
        counts = sorted((k for k in v if k.isdigit()), key=int)
        one, many = v[counts[0]], v[counts[-1]]
        print(f"vision call: {mib(one['peak_above_before'])} above the process before it for one unit, "
              f"{mib(many['peak_above_before'])} for {v['frames']} frames (features {mib(many['feature_bytes'])}): "
              f"{v['x_one_plus_features']:.2f}× one unit + the added frames' features")
    if "mukv" in report:
        c = report["mukv"]
        after = report["measured"]["questions"][-1]["after_frames"]
        print(f"\n{'MuKV vs ReKV, same export and stream':<40}{'ReKV':>12}{'MuKV':>12}{'MuKV/ReKV':>11}")
        for key, label, fmt in (("encode_frames_per_s", "encode frames/s (vision + LLM)", "{:.2f}"),
                                ("llm_frames_per_s", "encode frames/s (LLM only)", "{:.2f}"),
                                ("memory_tokens_per_300_frames", "memory tokens per 300 frames", "{:,.0f}"),
                                ("context_tokens", f"context tokens after {after} frames", "{:,}"),
                                ("ttft_s", f"TTFT s after {after} frames", "{:.3f}")):
            print(f"  {label:<38}{fmt.format(c['rekv'][key]):>12}{fmt.format(c['mukv'][key]):>12}"
                  f"{c['mukv_over_rekv'][key]:>11.3f}")
    print_long(report)


def print_long(report):
    if "long" in report:
        lg = report["long"]
        print(f"\n{'stream time':>12}{'frames':>8}{'RSS':>12}{'wall s':>9}")
        for smp in lg["samples"]:
            print(f"{smp['stream_s'] / 60:>10.0f} m{smp['frames']:>8}{mib(smp['rss']):>12}{smp['wall_s']:>9.0f}")
        if lg["rss_at_10min"]:
            print(f"peak sampled RSS / RSS at 10 min: {lg['peak_over_10min']:.3f}")
