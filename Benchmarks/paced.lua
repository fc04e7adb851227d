-- wrk script for Benchmarks/run's equal-load cases: every request asks for /objects/<id> with the
-- id drawn uniformly from LOW..HIGH (arguments 1 and 2; LOW = HIGH for one hot object), and each
-- connection pauses PAUSE_MS (argument 3) after every response. The offered load is then set by
-- the connections and the pause, not by how fast the server answers, so both servers see about
-- the same requests per second and their latencies compare like for like.

local threads = 0

function setup(thread)
    threads = threads + 1
    thread:set("thread_number", threads)
end

function init(args)
    low = tonumber(args[1]) or 1
    high = tonumber(args[2]) or low
    pause = tonumber(args[3]) or 4
    math.randomseed(os.time() * 1000 + thread_number)
end

function request()
    return wrk.format("GET", "/objects/" .. math.random(low, high))
end

function delay()
    return pause
end
