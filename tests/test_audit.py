"""chapter2.audit: MFU where the device's vendor peak is known, the share of the measured
peak elsewhere (never called MFU)."""

import pytest

from chapter2.audit import VENDOR_PEAKS, utilization


def test_a_known_device_gets_its_mfu_against_the_vendors_peak():
    found = utilization(5e12, 0.1, "TPU v5 lite", measured_peak=1e12)
    assert found.vendor
    assert found.peak == VENDOR_PEAKS["TPU v5 lite"][0] == 197e12
    assert found.share == pytest.approx(5e12 / 0.1 / 197e12)
    assert str(found).startswith("MFU ")


def test_another_device_gets_its_share_of_the_measured_peak_not_an_mfu():
    found = utilization(5e9, 0.1, "cpu", measured_peak=1e11)
    assert not found.vendor
    assert found.share == pytest.approx(0.5)
    assert "MFU" not in str(found).replace("not an MFU", "")
    assert "not an MFU" in str(found)
    assert utilization(5e9, 0.1, "cpu", measured_peak=None) is None
