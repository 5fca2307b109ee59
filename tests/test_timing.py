"""Speed statistics, the roofline floor and tier scoring (no GPU needed)."""

import pytest

from grader.gpu import statistics as timing
from grader.gpu.harness import hidden_work
from grader.authoring.spec import DEFAULT_TIERS, SpeedTier


def test_speedup_is_the_median_of_pairwise_ratios():
    baseline = [2.0, 2.2, 2.0, 4.0, 2.0]
    yours = [1.0, 1.0, 1.0, 1.0, 2.0]
    ratio = timing.paired_ratio(baseline, yours)
    assert ratio.median == pytest.approx(2.0)
    assert ratio.low <= ratio.median <= ratio.high


def test_a_slow_outlier_pair_does_not_move_the_median():
    """Is one disturbed pair (a clock hiccup) kept out of the figure?"""
    baseline = [2.0] * 9 + [50.0]
    yours = [1.0] * 10
    assert timing.paired_ratio(baseline, yours).median == pytest.approx(2.0)


def test_spread_and_settling():
    tight = timing.paired_ratio([1.00, 1.01, 0.99, 1.00], [1, 1, 1, 1])
    loose = timing.paired_ratio([1.0, 1.3, 0.7, 1.0], [1, 1, 1, 1])
    assert tight.spread < 0.02 < loose.spread
    assert timing.settled([tight], 0.01) and not timing.settled([tight, loose], 0.01)


def test_noisy_ratios_settle_once_there_are_enough_pairs():
    """A 5% interquartile spread (short kernels) pins the median to 1% after ~60 pairs."""
    pattern = [0.95, 1.05, 1.0, 0.97, 1.03, 1.0]
    few = timing.paired_ratio(pattern, [1.0] * 6)
    many = timing.paired_ratio(pattern * 20, [1.0] * 120)
    assert not timing.settled([few], 0.01) and timing.settled([many], 0.01)


def test_floor_uses_the_faster_of_copy_and_read_bandwidth():
    ceilings = {"copy_bandwidth": 3e12, "read_bandwidth": 4e12}
    assert timing.floor_seconds(4e9, 0, ceilings) == pytest.approx(1e-3)


def test_floor_uses_the_larger_of_memory_and_compute_time():
    ceilings = {"copy_bandwidth": 4e12, "fp32_flops": 50e12}
    assert timing.floor_seconds(4e9, 0, ceilings) == pytest.approx(1e-3)
    assert timing.floor_seconds(4e6, 100e9, ceilings) == pytest.approx(2e-3)


def test_a_time_below_the_floor_is_rejected_and_one_near_it_is_not():
    """Real kernels beat our simple ceilings by up to ~1.7x (cuBLAS vs our FMA loop): those
    must pass; a time 3x under the floor must not."""
    assert timing.below_floor(0.3e-3, 1e-3)
    assert not timing.below_floor(1 / 1.7 * 1e-3, 1e-3)
    assert not timing.below_floor(1e-9, 0.0), "no ceiling measured: nothing to reject"


def test_throughput_reports_unit_and_fraction_of_ceiling():
    ceilings = {"copy_bandwidth": 4e12, "fp32_flops": 50e12}
    mem = timing.throughput("memory", 4e9, 0, 2e-3, ceilings)
    assert mem["unit"] == "GB/s" and mem["achieved"] == pytest.approx(2000)
    assert mem["fraction_of_ceiling"] == pytest.approx(0.5)
    comp = timing.throughput("compute", 0, 2 * 4096**3, 10e-3, ceilings)
    assert comp["unit"] == "TFLOP/s" and comp["achieved"] == pytest.approx(13.74, rel=1e-3)


@pytest.mark.parametrize(
    "fraction, tier, points",
    [(0.2, None, 0), (0.5, "good", 1), (0.8, "great", 2), (0.95, "near the limit", 3), (2.0, "near the limit", 3)],
)
def test_tiers(fraction, tier, points):
    assert timing.tier_reached(fraction, DEFAULT_TIERS) == (tier, points)


def test_tiers_need_not_be_listed_in_order():
    tiers = (SpeedTier("b", 0.8, 2), SpeedTier("a", 0.4, 1))
    assert timing.tier_reached(0.9, tiers) == ("b", 2)
    assert timing.max_speed_points(tiers) == 2


def test_hidden_work_is_seen_by_the_host_clock():
    """Kernel time hidden on another stream shows up as the GPU staying busy after the end
    event; the few microseconds a synchronize always takes do not."""
    assert hidden_work([1e-3] * 5, [4e-3] * 5)
    assert not hidden_work([1e-3] * 5, [20e-6] * 5)


def test_a_read_bound_exercise_is_held_to_the_read_ceiling():
    """A reduction reads its input and writes one number: its GB/s is a fraction of what this
    GPU reads, not of a copy's read + write, so a kernel at the limit is near 100%, never over."""
    from grader.gpu.statistics import throughput

    ceilings = {"copy_bandwidth": 3.0e12, "read_bandwidth": 3.3e12, "fp32_flops": 5e13}
    seconds = 1e9 / 3.2e12  # 1 GB read at 3.2 TB/s: over the copy ceiling, under the read one
    read = throughput("read", 1e9, 0.0, seconds, ceilings)
    copy = throughput("memory", 1e9, 0.0, seconds, ceilings)
    assert read["fraction_of_ceiling"] < 1.0 < copy["fraction_of_ceiling"]
    assert read["unit"] == copy["unit"] == "GB/s" and read["achieved"] == copy["achieved"]
