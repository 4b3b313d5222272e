"""A PostgreSQL cluster of its own for the scripts that run Ghost instances on one database.

It lives in a temporary directory, runs as `nobody` when run as root (PostgreSQL refuses root), listens on loopback
only, and is stopped (immediate) and removed by `stop`.
"""
import glob, os, shutil, socket, subprocess, tempfile, time, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read().decode()


# The operator key every Ghost these scripts start is given (changing the app needs it, however it is reached).
OPERATOR_KEY = "f" * 64


def start_ghost(ghost, name, url, root, *options, keyed=True):
    """Starts `ghost` on `url` (on its data directory alone when None) with a data directory and log under `root`,
    and OPERATOR_KEY as its operator key (none when not `keyed`); waits until its admin port says ready; returns the
    process (its `admin` the base URL of its admin port) and the base URL of its public port."""
    port, admin = free_port(), free_port()
    log = open(os.path.join(root, f"{name}.log"), "w")
    key = os.path.join(root, "operator.key")
    with open(key, "w") as file:
        file.write(OPERATOR_KEY)
    database = ["--database-url", url] if url else []
    operator = ["--operator-key-file", key] if keyed else []
    process = subprocess.Popen(
        [ghost, "--port", str(port), "--admin-port", str(admin), *database, *operator,
         "--data-directory", os.path.join(root, name), *options], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if get(f"http://127.0.0.1:{admin}/health/ready").startswith("ready"):
                process.admin = f"http://127.0.0.1:{admin}"
                return process, f"http://127.0.0.1:{port}"
        except OSError:
            pass
        time.sleep(0.1)
    process.terminate()
    raise RuntimeError(f"ghost {name} did not become ready")


class Cluster:
    def __init__(self, prefix):
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
        if not binaries:
            raise SystemExit("needs PostgreSQL: apt-get install postgresql")
        self.bin_dir = binaries[0]
        self.root = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.root, 0o777)
        self.data = os.path.join(self.root, "pg")
        self.port = free_port()

    def run(self, *command):
        prefix = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
        subprocess.run(prefix + list(command), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd="/tmp")

    def start(self):
        """Creates, starts and makes database `ghost`; returns its URL."""
        self.run(f"{self.bin_dir}/initdb", "-D", self.data, "-U", "ghost", "-A", "trust", "--no-sync")
        self.start_server()
        self.run(f"{self.bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "ghost", "ghost")
        return f"postgres://ghost@127.0.0.1:{self.port}/ghost?sslmode=disable"

    def start_server(self):
        """Starts the server on the cluster made by `start` (again, after `stop_server`)."""
        self.run(f"{self.bin_dir}/pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "pg.log"), "-w", "-o",
                 f"-F -p {self.port} -k {self.root} -c listen_addresses=127.0.0.1", "start")

    def stop_server(self, mode):
        """Stops the server, keeping the cluster: `fast` or `immediate` (a crash, as far as the data knows)."""
        self.run(f"{self.bin_dir}/pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def pids(self):
        """The postmaster and every process it started."""
        postmaster = int(open(os.path.join(self.data, "postmaster.pid")).readline())
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
        return [postmaster] + [int(pid) for pid in children]

    def stop(self, show_logs=False):
        if os.path.exists(self.data):
            self.stop_server("immediate")
        if show_logs:
            for log in sorted(glob.glob(os.path.join(self.root, "*.log"))):
                print(f"--- {log}", open(log).read()[-3000:], sep="\n")
        shutil.rmtree(self.root, ignore_errors=True)
