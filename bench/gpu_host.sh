# Sourced by the bench/device_*.sh scripts that grade on a GPU host, from the repository root:
# the wheels in .whl/ (numpy below 2.5, as pyproject pins; pyseccomp) installed into /tmp/site,
# Debian's bubblewrap package in .debs/ unpacked (not installed) for a host without it, and the
# grader pointed at the GPU.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
dpkg -x .debs/bubblewrap_*.deb /tmp/bw || exit 1
export PATH=/tmp/bw/usr/bin:$PATH PYTHONPATH=/tmp/site:$PWD ZEROGPU_BACKEND=gpu ZEROGPU_HOME=/tmp/zerogpu-home PYTHONUNBUFFERED=1
