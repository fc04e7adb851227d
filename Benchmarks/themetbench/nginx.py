"""nginx with proxy_cache in front of the fake Met: its configuration, and starting it.

nginx rejects `listen 127.0.0.1:0` ("invalid port"), could not say which port it got anyway, and
wrk cannot connect to a Unix socket. So the run binds the loopback socket itself, on port 0, and
hands the listening socket to nginx the way an nginx binary upgrade hands its sockets to the new
binary: the descriptor stays open across exec and the NGINX environment variable names it ("3;"
for descriptor 3). The master reads that variable at start-up (ngx_add_inherited_sockets in
src/core/nginx.c, there since the 0.x releases) and uses the inherited socket for the `listen`
whose address matches instead of binding one; its error.log says `using inherited sockets from
"3;"`. nginx's documentation of the `env` directive says the variable "is used internally by
nginx and should not be set directly by the user", so this leans on an implementation detail, if
a long-standing one. Nothing probes for a free port, so nothing can take the port between the
choice and the bind."""

import functools
import os
import resource
import re
import shutil
import socket
import subprocess
from pathlib import Path

from .processes import Child, Supervisor
from .servers import wait_until_healthy
from .workload import HOST, LOOPS

# Debian puts nginx in /usr/sbin, which a non-root PATH may lack.
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
NGINX_BACKLOG = 511  # nginx's own listen backlog on Linux; with another, it would listen() again


@functools.cache
def nginx_version() -> tuple[str, tuple[int, ...]]:
    """`nginx -v`'s text and the version as numbers."""
    text = subprocess.run([NGINX, "-v"], capture_output=True, text=True).stderr.strip()
    match = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", text)
    return text, tuple(int(part) for part in match.groups()) if match else ()


def open_files() -> int:
    """Files an nginx worker may keep open in its open_file_cache: half its open-files limit (which
    it inherits from this process), less its 4,096 connections, at most 200,000, at least 1,000."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = soft if soft != resource.RLIM_INFINITY else 1 << 20
    return max(1_000, min(200_000, limit // 2 - 4_096))


def nginx_config(prefix: Path, port: int, upstream_port: int) -> str:
    """nginx with proxy_cache in front of the fake: the same /objects/ and /images/ paths as themet
    serves."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # root's workers must write the cache
    temp = prefix / "temp"
    return f"""\
daemon off;
master_process on;
worker_processes {LOOPS};
{user}pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    # The default (1000) would close wrk's connections and penalise nginx.
    keepalive_requests 1000000;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    # Descriptors kept open per worker: as many as its open-files limit leaves beside its
    # connections (past the limit, hits on a spread wider than it failed with EMFILE).
    open_file_cache max={open_files()} inactive=60s;
    proxy_cache_path {prefix}/cache levels=1:2 keys_zone=met:64m max_size=2g inactive=1d use_temp_path=off;
    upstream fake {{
        server {HOST}:{upstream_port};
        keepalive 32;
    }}
    server {{
        listen {HOST}:{port};
        location = /health {{
            default_type application/json;
            return 200 '{{"status":"ok"}}';
        }}
        location /objects/ {{
            proxy_pass http://fake/public/collection/v1/objects/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Accept-Encoding "";
            proxy_cache met;
            proxy_cache_valid 200 404 1d;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 30s;
            # The fake, like the Met, sends Set-Cookie and Vary and no caching headers.
            proxy_ignore_headers Set-Cookie Cache-Control Expires Vary;
            proxy_hide_header Set-Cookie;
            add_header X-Cache $upstream_cache_status;
        }}
        # The pictures, at the paths themet serves them: the fake is the image host too.
        location /images/ {{
            proxy_pass http://fake/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache met;
            proxy_cache_valid 200 1d;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 30s;
            proxy_ignore_headers Set-Cookie Cache-Control Expires Vary;
            add_header X-Cache $upstream_cache_status;
        }}
        # Plain files under the prefix (`plain_directory`): the original's bytes, put there by the
        # warm-up, sent as nginx sends static files.
        location /plain/ {{
            root {prefix};
        }}
    }}
}}
"""


def plain_directory(child: Child) -> Path:
    """Where an nginx started here serves /plain/ from: the directory that path names in its prefix."""
    return child.data / "plain"


def loopback_listener() -> socket.socket:
    """A TCP socket listening on 127.0.0.1 at a port the kernel picked, set up as nginx sets up the
    sockets it binds itself: SO_REUSEADDR, its backlog (511 on Linux), and non-blocking, which
    nginx does not do to an inherited socket and its workers need."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((HOST, 0))
    listener.listen(NGINX_BACKLOG)
    listener.setblocking(False)
    return listener


def launch_nginx(supervisor: Supervisor, upstream_port: int) -> tuple[Child, int]:
    """Writes a config into a fresh prefix directory and starts nginx on a listening socket it
    inherits; returns it and the socket's port, without waiting for it."""
    prefix = supervisor.path(f"nginx-{len(supervisor.children):02d}")
    (prefix / "temp").mkdir()
    config = prefix / "nginx.conf"
    # This copy of the socket is closed when the block ends: then only nginx holds it, and the
    # port is free again once nginx has stopped.
    with loopback_listener() as listener:
        port = listener.getsockname()[1]
        config.write_text(nginx_config(prefix, port, upstream_port))
        argv = [NGINX, "-p", str(prefix), "-c", str(config)]
        if nginx_version()[1] >= (1, 19, 5):  # -e: never touch the packaged /var/log/nginx
            argv += ["-e", str(prefix / "error.log")]
        child = supervisor.start("nginx", argv, extra_log=prefix / "error.log", pass_fds=(listener.fileno(),),
                                 env={**os.environ, "NGINX": f"{listener.fileno()};"})
    child.data = prefix
    return child, port


def start_nginx(supervisor: Supervisor, upstream_port: int) -> tuple[Child, int]:
    """Starts nginx on a port the kernel picked; returns it and its port once it answers /health."""
    child, port = launch_nginx(supervisor, upstream_port)
    wait_until_healthy(child, port)
    return child, port
