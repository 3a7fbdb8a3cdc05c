// Every operation the dashboard sends. GraphQL Code Generator types them (src/gql/) and writes them into
// the trusted-documents manifest: the page sends each one's hash only, and the gateway runs the
// document it loaded for that hash.
import { graphql } from './gql';

/** The key's websites for the switcher, oldest first, filtered by the search box. */
export const WebsitesQuery = graphql(`
  query Websites($search: String) {
    websites(search: $search, perPage: 25, sortBy: CREATED_AT, sort: ASC) {
      totalCount
      nodes {
        id
        domain
      }
    }
  }
`);

/**
 * The totals against the compared range, and both ranges day by day for the chart: one request, as the
 * summary reads the days it totals and says when the range is not over (`partial`) and which days its
 * changes compare.
 */
export const OverviewQuery = graphql(`
  query Overview($id: ID!, $period: Period, $from: Date, $to: Date, $compare: Comparison!) {
    website(id: $id) {
      id
      domain
      summary(period: $period, from: $from, to: $to, compare: $compare) {
        partial
        changeBasis {
          current {
            from
            to
          }
          previous {
            from
            to
          }
        }
        current {
          visitors
          pageviews
          range {
            from
            to
          }
          points {
            date
            visitors
            pageviews
          }
        }
        previous {
          range {
            from
            to
          }
          points {
            date
            visitors
            pageviews
          }
        }
        visitorsChange
        pageviewsChange
      }
    }
  }
`);

/** One page of a statistic: top pages, referrers, countries or browsers. */
export const TopQuery = graphql(`
  query Top($id: ID!, $name: StatName!, $period: Period, $from: Date, $to: Date, $page: Int!) {
    website(id: $id) {
      id
      stats(name: $name, period: $period, from: $from, to: $to, page: $page, perPage: 10) {
        totalCount
        nodes {
          value
          label
          count
        }
        pageInfo {
          page
          hasNextPage
        }
      }
    }
  }
`);

/** Today's figures, pushed again whenever they change. */
export const LiveSubscription = graphql(`
  subscription Live($id: ID!) {
    website(id: $id) {
      id
      today: summary(period: TODAY) {
        current {
          visitors
          pageviews
          range {
            from
          }
        }
      }
      pages: stats(name: PAGE, period: TODAY, perPage: 10) {
        nodes {
          value
          count
        }
      }
    }
  }
`);
