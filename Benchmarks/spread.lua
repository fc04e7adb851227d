-- wrk script for Benchmarks/run's spread case: every request asks for /objects/<id>, with the id
-- drawn uniformly from 1..N (N is the first script argument, default 1000). Each thread seeds
-- its own generator, so the two threads do not walk the same sequence.

local threads = 0

function setup(thread)
    threads = threads + 1
    thread:set("thread_number", threads)
end

function init(args)
    count = tonumber(args[1]) or 1000
    math.randomseed(os.time() * 1000 + thread_number)
end

function request()
    return wrk.format("GET", "/objects/" .. math.random(1, count))
end
