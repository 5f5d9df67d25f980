"""Standard Workload Format files round-trip through Python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import partalloc as pa


def test_read_write_round_trip(small_trace: Path, tmp_path: Path) -> None:
    df = pa.read_swf(small_trace)
    assert len(df) == 500 and list(df.columns) == list(pa.SWF_FIELDS)
    assert df["job_number"].iloc[0] == 1
    assert df.attrs["header"][0].strip() == "Version: 2.2"
    out = tmp_path / "copy.swf"
    pa.write_swf(out, df)
    again = pa.read_swf(out)
    np.testing.assert_array_equal(df.to_numpy(), again.to_numpy())
    assert again.attrs["header"] == df.attrs["header"]


def test_structured_array_without_pandas(small_trace: Path) -> None:
    arr = pa.read_swf(small_trace, as_frame=False)
    assert arr.dtype.names == pa.SWF_FIELDS and arr.shape == (500,)
    assert np.isnan(arr["used_memory"]).all()  # the NASA trace has no memory field
    assert pa.read_swf_header(small_trace)[1].strip().startswith("Computer:")


def test_bad_files_raise_with_line_numbers(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("; Version: 2.2\n1 0 0 10 4\n")
    with pytest.raises(ValueError, match=r"bad.swf: line 2"):
        pa.read_swf(bad)
    with pytest.raises(OSError, match="missing.swf"):
        pa.read_swf(tmp_path / "missing.swf")
    with pytest.raises(ValueError, match="whole number"):
        pa.write_swf(tmp_path / "x.swf", {f: [1.5] for f in pa.SWF_FIELDS})
    assert not (tmp_path / "x.swf").exists()
