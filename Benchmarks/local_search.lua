-- wrk script for Benchmarks/run's local search case: every request is a one-word search of the
-- server's own index with two facets, /search?source=local&q=<word>&facets=department,classification,
-- the word drawn uniformly from the script's arguments. Each thread seeds its own generator.

local threads = 0

function setup(thread)
    threads = threads + 1
    thread:set("thread_number", threads)
end

function init(args)
    words = args
    math.randomseed(os.time() * 1000 + thread_number)
end

function request()
    local word = words[math.random(1, #words)]
    return wrk.format("GET", "/search?source=local&q=" .. word .. "&facets=department,classification")
end
