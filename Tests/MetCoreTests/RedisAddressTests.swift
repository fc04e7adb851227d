import Testing

@testable import MetCore
@testable import MetEngine

@Suite("--redis addresses")
struct RedisAddressTests {
    @Test func readsEachPartOfATCPAddress() throws {
        let address = try #require(RedisAddress("redis://ada:s%3Acret@cache.lan:6380/2"))
        #expect(address.endpoint == .tcp(host: "cache.lan", port: 6380))
        #expect(address.user == "ada")
        #expect(address.password == "s:cret")
        #expect(address.database == 2)
        #expect(address.description == "redis://ada:***@cache.lan:6380/2")  // never the password
    }

    @Test func fillsInTheDefaults() throws {
        let address = try #require(RedisAddress("redis://127.0.0.1"))
        #expect(address.endpoint == .tcp(host: "127.0.0.1", port: 6379))
        #expect(address.user == nil && address.password == nil && address.database == 0)
        #expect(try #require(RedisAddress("redis://:pw@[::1]:7000/")).endpoint == .tcp(host: "::1", port: 7000))
        #expect(RedisAddress("redis://:pw@[::1]:7000/")?.description == "redis://:***@[::1]:7000")
    }

    @Test func readsAUnixSocket() throws {
        let address = try #require(RedisAddress("unix:///run/redis/redis.sock?db=3"))
        #expect(address.endpoint == .unix(path: "/run/redis/redis.sock"))
        #expect(address.database == 3)
        #expect(address.description == "unix:///run/redis/redis.sock?db=3")
    }

    @Test(arguments: [
        "", "127.0.0.1:6379", "http://127.0.0.1", "redis://", "redis://host:0", "redis://host:65536",
        "redis://host:port", "redis://host/16", "redis://host/-1", "redis://host/x", "redis://user@host",
        "redis://user:@host", "redis://ho st", "redis://[::1", "redis://:%zz@host", "unix://", "unix://relative",
        "unix:///sock?db=99", "unix:///sock?x=1",
    ])
    func refusesWhatIsNotAnAddress(_ text: String) {
        #expect(RedisAddress(text) == nil)
    }
}
