-- wrk script for Benchmarks/run's shared-miss case. Thread i talks to the i-th of the ports in
-- SHARED_MISS_PORTS (round-robin; all threads to wrk's own URL when it is empty), and every
-- thread walks the same object IDs from SHARED_MISS_START up, one new ID per request, so each
-- uncached key reaches every instance at about the same time. The variables come from the
-- environment because wrk passes script arguments to init, after setup has placed the threads.

local ports = {}
for port in string.gmatch(os.getenv("SHARED_MISS_PORTS") or "", "%d+") do
    ports[#ports + 1] = port
end
local threads = 0

function setup(thread)
    threads = threads + 1
    if #ports > 0 then
        thread.addr = wrk.lookup("127.0.0.1", ports[(threads - 1) % #ports + 1])[1]
    end
end

function init(args)
    next_id = tonumber(os.getenv("SHARED_MISS_START") or "50001")
end

function request()
    local id = next_id
    next_id = next_id + 1
    return wrk.format("GET", "/objects/" .. id)
end
