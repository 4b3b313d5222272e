internal import Foundation

/// Reads a JSON file bundled with the app; a missing or malformed file names the file and what is wrong.
enum SampleFile {
    static func load<Value: Decodable>(_ name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Samples") else {
            throw SampleFileError(
                description: "The sample file \(name).json is not in the app's bundle; rebuild the app.")
        }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(contentsOf: url))
        } catch {
            throw SampleFileError(description: "The sample file \(url.path) could not be read: \(error)")
        }
    }
}

struct SampleFileError: Error, CustomStringConvertible {
    let description: String
}

/// Weather from `weather.json`.
struct SampleWeather: WeatherData {
    let reports: [CityWeather]

    init() throws { reports = try SampleFile.load("weather") }

    var cities: [String] { reports.map(\.city) }

    func weather(in city: String) -> CityWeather? {
        reports.first { $0.city.caseInsensitiveCompare(city) == .orderedSame }
    }
}

/// Results from `sports.json`.
struct SampleSports: SportsData {
    let games: [Game]

    init() throws { games = try SampleFile.load("sports") }

    var teams: [String] { Array(Set(games.flatMap { [$0.home, $0.away] })).sorted() }

    func games(of team: String) -> [Game] {
        games.filter {
            $0.home.caseInsensitiveCompare(team) == .orderedSame || $0.away.caseInsensitiveCompare(team) == .orderedSame
        }
    }
}

/// Works from `art.json`.
struct SampleArt: ArtData {
    let works: [Artwork]

    init() throws { works = try SampleFile.load("art") }
}

/// The location a fresh install assumes.
struct FixedLocation: LocationService {
    let defaultCity = "Chicago"
}
