import pytest

from vitcore.analysis.work import macs
from vitcore.config.run import RunConfig
from vitcore.run import bench


@pytest.mark.parametrize("rows, steps", [(1_000, 15), (4_000, 62), (40, 1)])
def test_run_flops_count_the_batches_trained_the_validation_and_the_test(rows, steps):
    cfg = RunConfig(train_rows=rows)
    flops, forward = bench.run_flops(cfg), 2 * macs(cfg)
    batch = min(cfg.batch_size, rows)
    assert flops == {"epochs": cfg.epochs * steps * batch * 3 * forward, "validation": cfg.epochs * 5_000 * forward,
                     "test": 10_000 * forward}
    if rows == 1_000:  # ~0.30 TFLOP (bench/RESULTS.md) for the article's ViT at 1,000 rows
        assert 0.29e12 < sum(flops.values()) < 0.31e12


def test_matmul_rate_is_positive_and_best_is_the_highest():
    rates = bench.matmul_rate(1, side=256, seconds=0.06, backends=("numpy",))
    assert set(rates) == {"numpy", "best"} and rates["best"] == rates["numpy"] > 1e8


def test_floor_seconds_and_times_the_floor_are_the_counted_flops_at_the_rate():
    cfg = RunConfig(train_rows=1_000)
    flops = sum(bench.run_flops(cfg).values())
    assert bench.floor_seconds(cfg, 300e9) == flops / 300e9  # ~1.0 s at 300 GFLOP/s
    assert 0.97 < bench.floor_seconds(cfg, 300e9) < 1.03
    assert bench.times_floor(5.0, cfg, 300e9) == 5.0 * 300e9 / flops
    assert bench.times_floor(5.0, cfg, 150e9) == pytest.approx(bench.times_floor(5.0, cfg, 300e9) / 2)  # floor 2x


def test_the_sweep_bench_reports_each_reused_run_against_its_floor():
    """bench --what sweep: the cell's ratio to single processes, and every reused run's seconds over its bench."""
    from vitcore.run.bench import sweep_report

    cfg = RunConfig(train_rows=4_000)
    rate = sum(bench.run_flops(cfg).values()) / 2.0  # the floor is 2.00 s
    lines = sweep_report(cfg, worker=[600.0, 400.0], fresh=[200.0, 200.0], reused=[5.0, 7.0, 6.0], rate=rate)
    assert len(lines) == 2
    assert "median ratio 2.50x" in lines[0] and "cell time 0.40x the processes'" in lines[0]  # median of 3.0 and 2.0
    assert lines[1].startswith("4,000 rows, 3 reused runs (floor 2.00 s): "
                               "5.00 s = 2.50x, 7.00 s = 3.50x, 6.00 s = 3.00x")
    assert "median 6.00 s = 3.00x the floor" in lines[1]
    assert len(sweep_report(cfg, [600.0], [200.0], [], rate)) == 1  # no reused run (one run a cell): no floor line
