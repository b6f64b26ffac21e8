import pytest

from vitcore.analysis.work import macs
from vitcore.config.run import RunConfig
from vitcore.run import floor


@pytest.mark.parametrize("rows, steps", [(1_000, 15), (4_000, 62), (40, 1)])
def test_run_flops_count_the_batches_trained_the_validation_and_the_test(rows, steps):
    cfg = RunConfig(train_rows=rows)
    flops, forward = floor.run_flops(cfg), 2 * macs(cfg)
    batch = min(cfg.batch_size, rows)
    assert flops == {"epochs": cfg.epochs * steps * batch * 3 * forward, "validation": cfg.epochs * 5_000 * forward,
                     "test": 10_000 * forward}
    if rows == 1_000:  # issue 40's figure: ~0.30 TFLOP for the article's ViT at 1,000 rows
        assert 0.29e12 < sum(flops.values()) < 0.31e12


def test_matmul_rate_is_positive_and_best_is_the_highest():
    rates = floor.matmul_rate(1, side=256, seconds=0.06, backends=("numpy",))
    assert set(rates) == {"numpy", "best"} and rates["best"] == rates["numpy"] > 1e8
