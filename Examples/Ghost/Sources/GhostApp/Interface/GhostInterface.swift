public import Mosaic

/// Where the user is. Declared in the app's interface, so modules depend on it and not on each other.
public protocol LocationService: Sendable {
    /// The city a fresh install shows.
    var defaultCity: String { get }
}

/// Weather by city: bundled samples here; a network implementation can replace it with rank `.override`.
public protocol WeatherData: Sendable {
    /// The cities there is weather for, in display order.
    var cities: [String] { get }
    /// The weather in `city`, or `nil` when there is none.
    func weather(in city: String) -> CityWeather?
}

/// The weather in one city.
public struct CityWeather: Sendable, Hashable, Codable {
    /// The city, as the data source spells it.
    public var city: String
    /// Degrees Celsius now.
    public var temperature: Int
    /// What the sky is doing, in a few words.
    public var condition: String
    /// The next days, one line each.
    public var forecast: [String]

    /// Weather for one city.
    public init(city: String, temperature: Int, condition: String, forecast: [String]) {
        self.city = city
        self.temperature = temperature
        self.condition = condition
        self.forecast = forecast
    }
}

/// Results by team.
public protocol SportsData: Sendable {
    /// The teams there are results for.
    var teams: [String] { get }
    /// `team`'s latest games, newest first.
    func games(of team: String) -> [Game]
}

/// One finished game.
public struct Game: Sendable, Hashable, Codable {
    /// The home team.
    public var home: String
    /// The visiting team.
    public var away: String
    /// The home team's score.
    public var homeScore: Int
    /// The visiting team's score.
    public var awayScore: Int
}

/// Works of art to show, one a day.
public protocol ArtData: Sendable {
    var works: [Artwork] { get }
}

/// One work of art.
public struct Artwork: Sendable, Hashable, Codable {
    /// The work's title.
    public var title: String
    /// Who made it.
    public var artist: String
    /// When it was made (a year or a span, as the source gives it).
    public var year: String
}

/// What a person opened, published by the feature that handled it, in the same transaction as the favourite it
/// stored; Analytics counts each once. Durable: kept in the outbox (PostgreSQL, with several instances) until
/// Analytics has counted it, whichever instance does, even across a crash.
public struct FeatureOpened: DurableEvent, Hashable {
    /// The name in the outbox.
    public static let durableName = "ghost.feature-opened"
    /// The feature that was opened, for example `weather`.
    public var feature: String
    /// An opening of `feature`.
    public init(feature: String) { self.feature = feature }
}

extension StateKey where Value == String {
    /// The city Weather shows and Dashboard greets with; set by `ghost://dashboard/weather/city?name=…`.
    public static var favouriteCity: StateKey<String> {
        StateKey("ghost.favourite-city", initial: "Chicago", persistence: .database, writers: ["com.ghost.weather"])
    }

    /// The team Sports shows first; set by `ghost://sports/sports/team?name=…`.
    public static var favouriteTeam: StateKey<String> {
        StateKey("ghost.favourite-team", initial: "Bulls", persistence: .database, writers: ["com.ghost.sports"])
    }
}

extension StateKey where Value == [String: Int] {
    /// How often each feature was opened; kept by Analytics.
    public static var usage: StateKey<[String: Int]> {
        StateKey("ghost.usage", initial: [:], persistence: .database, writers: ["com.ghost.analytics"])
    }
}

/// `ghost://dashboard/weather/city?name=Chicago`: make `name` the favourite city.
public struct CityRoute: DeeplinkRoute {
    public static let tab = "dashboard", feature = "weather"
    /// The action: `city`.
    public static let action: String? = "city"
    /// The city to make the favourite.
    public var name: String
    /// A link to make `name` the favourite city.
    public init(name: String) { self.name = name }
}

/// `ghost://sports/sports/team?name=Bulls`: show `name`'s games first.
public struct TeamRoute: DeeplinkRoute {
    public static let tab = "sports", feature = "sports"
    /// The action: `team`.
    public static let action: String? = "team"
    /// The team to show first.
    public var name: String
    /// A link to show `name` first.
    public init(name: String) { self.name = name }
}

extension ServiceKey where Value == any LocationService {
    /// Where the user is.
    public static var location: Self { Self() }
}

extension ServiceKey where Value == any WeatherData {
    /// Weather by city.
    public static var weatherData: Self { Self() }
}

extension ServiceKey where Value == any SportsData {
    /// Results by team.
    public static var sportsData: Self { Self() }
}

extension ServiceKey where Value == any ArtData {
    /// Works of art.
    public static var artData: Self { Self() }
}

/// Why a link named something Ghost has no data for.
public struct UnknownName: Error, Sendable, CustomStringConvertible {
    /// What kind of name was not found; new codes may be added.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The value as text.
        public let rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The value as text, for messages and logs.
        public var description: String { rawValue }

        /// No city of that name.
        public static let unknownCity = Code(rawValue: "unknown-city")
        /// No team of that name.
        public static let unknownTeam = Code(rawValue: "unknown-team")
    }

    /// What kind of name was not found.
    public let code: Code
    /// What was not found and which names exist.
    public let description: String
    init(_ code: Code, _ name: String, known: [String]) {
        self.code = code
        let kind = code.rawValue.dropFirst("unknown-".count)
        description = "There is no \(kind) named '\(name)'; try one of: \(known.joined(separator: ", "))."
    }

    /// The name's rejection as a link's invalid parameter: the client's mistake, not the handler's fault.
    public var linkError: DeeplinkError {
        DeeplinkError(.invalidParameter, description, fix: "Open the link with one of those names.")
    }
}
